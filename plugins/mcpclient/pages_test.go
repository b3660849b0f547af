package mcpclient

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestListAll: the one pagination loop follows cursors to the end, leaves nil items out,
// stops at a limit saying whether there was more, and refuses a cursor loop and an endless
// listing instead of following them.
func TestListAll(t *testing.T) {
	one, two, three := "a", "b", "c"
	// pages maps a cursor to its page: the items and the next cursor.
	type page struct {
		items []*string
		next  string
	}
	serve := func(pages map[string]page, asked *[]string) func(string) ([]*string, string, error) {
		return func(cursor string) ([]*string, string, error) {
			*asked = append(*asked, cursor)
			p, ok := pages[cursor]
			if !ok {
				return nil, "", errors.New("unknown cursor " + strconv.Quote(cursor))
			}
			return p.items, p.next, nil
		}
	}
	listing := map[string]page{
		"":   {[]*string{&one, nil}, "p2"},
		"p2": {[]*string{&two}, "p3"},
		"p3": {[]*string{&three}, ""},
	}
	for _, tc := range []struct {
		name   string
		pages  map[string]page
		limit  int
		want   []string
		more   bool
		asked  []string
		errSub string
	}{
		{"every page", listing, 0, []string{"a", "b", "c"}, false, []string{"", "p2", "p3"}, ""},
		{"limit within a page", listing, 1, []string{"a"}, true, []string{""}, ""},
		{"limit at the end", listing, 3, []string{"a", "b", "c"}, false, []string{"", "p2", "p3"}, ""},
		{"limit above the total", listing, 10, []string{"a", "b", "c"}, false, []string{"", "p2", "p3"}, ""},
		{"a loop", map[string]page{"": {[]*string{&one}, "x"}, "x": {[]*string{&two}, "x"}}, 0, nil, false, []string{"", "x"}, `repeated the cursor "x"`},
		{"an error", map[string]page{"": {[]*string{&one}, "gone"}}, 0, nil, false, []string{"", "gone"}, `unknown cursor "gone"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			items, more, err := listAll(serve(tc.pages, &asked), tc.limit)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) || items != nil {
					t.Fatalf("items %v, err %v; want an error with %q", items, err, tc.errSub)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range items {
				got = append(got, *it)
			}
			if !slices.Equal(got, tc.want) || more != tc.more || !slices.Equal(asked, tc.asked) {
				t.Fatalf("got %v more %v asked %q; want %v more %v asked %q", got, more, asked, tc.want, tc.more, tc.asked)
			}
		})
	}

	// Cursors that never repeat and never end: refused after maxListPages pages.
	n := 0
	_, _, err := listAll(func(string) ([]*string, string, error) {
		n++
		return []*string{&one}, "c" + strconv.Itoa(n), nil
	}, 0)
	if err == nil || !strings.Contains(err.Error(), "more than 1000 pages") || n != maxListPages {
		t.Fatalf("endless listing: %v after %d pages", err, n)
	}
}
