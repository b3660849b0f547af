package mcpclient

import "fmt"

// maxListPages bounds one listing: a server whose cursors never end is refused rather than
// followed for ever.
const maxListPages = 1000

// listAll follows a paginated MCP listing: page(cursor) from the first page ("") on, until
// a page has no next cursor, and returns the items, nil ones left out. With limit > 0 it
// stops once it has limit items, and more says whether the listing had others. A cursor the
// server already returned in this listing (a loop), or more than maxListPages pages, fail
// the listing. It is the package's one pagination loop: tool discovery, the probe, the
// catalog's prompts and resources, and a task's look at its tool's listing.
func listAll[T any](page func(cursor string) ([]*T, string, error), limit int) (items []*T, more bool, err error) {
	seen := make(map[string]bool)
	cursor := ""
	for n := 1; ; n++ {
		got, next, err := page(cursor)
		if err != nil {
			return nil, false, err
		}
		for _, it := range got {
			if it != nil {
				items = append(items, it)
			}
		}
		if limit > 0 && len(items) >= limit {
			return items[:limit], next != "" || len(items) > limit, nil
		}
		switch {
		case next == "":
			return items, false, nil
		case seen[next]:
			return nil, false, fmt.Errorf("the server repeated the cursor %q: invalid list", next)
		case n >= maxListPages:
			return nil, false, fmt.Errorf("the list has more than %d pages", maxListPages)
		}
		seen[next] = true
		cursor = next
	}
}
