package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockgate/lockgate/model/locks"
)

// QueueIndexed reports whether claims on the session's store use the
// claim index and its queue epoch: every store but a transactional one
// (the git store), which reads its whole table for every change anyway
// and where the epoch's record would cost a push.
func (e *Workspace) QueueIndexed() bool {
	_, tx := e.Store.(locks.Transactor)
	return !tx
}

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
