package session

import (
	"errors"
	"fmt"

	"github.com/cordisgo/harness/internal/suggest"
)

// UnknownError is a session id the store does not have, worded for people: the store's
// directory, and the stored ids nearest a mistyped one. It wraps [ErrUnknownSession].
type UnknownError struct {
	ID, Dir string
	// Hint is the did-you-mean of the nearest stored ids ("" when none is near).
	Hint string
}

func (e *UnknownError) Error() string {
	switch {
	case e.ID == Last:
		return fmt.Sprintf("no stored session in %s yet", e.Dir)
	case e.Hint != "":
		return fmt.Sprintf("no session %q in %s (%s)", e.ID, e.Dir, e.Hint)
	}
	return fmt.Sprintf("no session %q in %s", e.ID, e.Dir)
}

func (e *UnknownError) Unwrap() error { return ErrUnknownSession }

// Unknown returns the *UnknownError of id, with the stored ids nearest it.
func (s *Store) Unknown(id string) *UnknownError {
	e := &UnknownError{ID: id, Dir: s.Dir()}
	if id != Last {
		infos, _ := s.List()
		ids := make([]string, 0, len(infos))
		for _, in := range infos {
			ids = append(ids, in.ID)
		}
		e.Hint = suggest.Phrase(suggest.Closest(id, ids, suggest.Options{}))
	}
	return e
}

// ReadID reads the events of the session id names ([Store.Resolve]: Last is the most
// recent); one the store does not have is its *UnknownError.
func (s *Store) ReadID(id string) ([]Event, error) {
	resolved, err := s.Resolve(id)
	if err == nil {
		var events []Event
		if events, err = s.Read(resolved); err == nil {
			return events, nil
		}
	}
	if errors.Is(err, ErrUnknownSession) {
		return nil, s.Unknown(id)
	}
	return nil, err
}
