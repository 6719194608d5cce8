package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockgate/lockgate/model/locks"
)

// NewQueueEpoch ends the store's queue epoch (QueueEpochKey), so that no
// claim index built before trusts that a finished package is still
// finished. Every change that makes one ready again calls it before and
// after its change: an index built meanwhile is dropped too.
func (e *Workspace) NewQueueEpoch(ctx context.Context) error {
	_, err := e.Store.Remove(ctx, QueueEpochKey)
	var corrupt *locks.CorruptError
	if err == nil || errors.Is(err, locks.ErrNotFound) || errors.As(err, &corrupt) {
		return nil
	}
	return fmt.Errorf("start a new queue epoch: %w", err)
}
