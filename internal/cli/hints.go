package cli

import (
	"errors"
	"fmt"
	"github.com/lockgate/lockgate/hooks"
	"time"

	"github.com/lockgate/lockgate/workflow"
)

// hintsFor says how to resolve an error, as commands the user can paste.
func hintsFor(err error) []string {
	var (
		held     *workflow.HeldError
		timeout  *workflow.TimeoutError
		notOwner *workflow.NotOwnerError
		corrupt  *workflow.CorruptError
	)
	switch {
	case errors.As(err, &timeout):
		return heldHints(timeout.Held, false)
	case errors.As(err, &held):
		return heldHints(held, true)
	case errors.As(err, &notOwner):
		k := hooks.ShellQuote(notOwner.Lock.Key)
		return []string{
			fmt.Sprintf("only %s (session %s) may %s it; to override: `lockgate lock %s %s --force` (logged)",
				notOwner.Lock.Holder, notOwner.Lock.Session, notOwner.Op, notOwner.Op, k),
		}
	case errors.As(err, &corrupt):
		return []string{fmt.Sprintf("inspect %s, then remove it with `lockgate lock clear %s --force`", corrupt.Path, hooks.ShellQuote(corrupt.Key))}
	}
	return nil
}

func heldHints(h *workflow.HeldError, offerWait bool) []string {
	l := h.Lock
	k := hooks.ShellQuote(l.Key)
	var out []string
	detail := fmt.Sprintf("lock %s: holder %s (%s), session %s, created %s, expires %s (%s)",
		h.Where, l.Holder, l.HolderType, l.Session, stamp(l.CreatedAt), stamp(l.ExpiresAt), until(l.ExpiresAt, time.Now()))
	if l.Reason != "" {
		detail += ", reason: " + l.Reason
	}
	out = append(out, detail)
	if offerWait {
		out = append(out, fmt.Sprintf("wait for it: add `--wait %s` to the command", human(max(time.Until(l.ExpiresAt), time.Minute))))
	}
	out = append(out,
		fmt.Sprintf("ask %s to run `lockgate lock release %s`", l.Holder, k),
		fmt.Sprintf("or remove it (logged): `lockgate lock clear %s --force`", k))
	return out
}
