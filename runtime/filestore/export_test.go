package filestore

import "time"

// SetNow makes the store's clock f, until the returned function puts it
// back.
func SetNow(f func() time.Time) (restore func()) {
	was := now
	now = f
	return func() { now = was }
}
