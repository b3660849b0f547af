package toolsearch_test

import (
	"fmt"

	"github.com/cordisgo/harness/toolsearch"
)

func ExampleIndex_Search() {
	ix := toolsearch.New([]toolsearch.Server{
		{Name: "fs", Tools: []toolsearch.Tool{
			{Name: "read_text_file", Description: "Read the complete contents of a file as text."},
			{Name: "write_file", Description: "Create a new file or overwrite an existing one."},
		}},
		{Name: "github", Tools: []toolsearch.Tool{
			{Name: "create_issue", Description: "Create a new issue in a GitHub repository",
				InputSchema: []byte(`{"type":"object","properties":{"title":{"type":"string"}}}`)},
		}},
	})
	for _, q := range []string{"show me what's in notes.txt", "open a bug report on GitHub", "raed a fiel", "读取文件"} {
		hits := ix.Search(q, toolsearch.SearchOptions{Limit: 1, Schemas: 1})
		h := hits[0]
		fmt.Printf("%s → %s/%s: %s\n", q, h.Server, h.Name, h.Purpose)
		if h.InputSchema != nil {
			fmt.Printf("  schema %s\n", h.InputSchema)
		}
	}
	// Output:
	// show me what's in notes.txt → fs/read_text_file: Read the complete contents of a file as text.
	// open a bug report on GitHub → github/create_issue: Create a new issue in a GitHub repository
	//   schema {"type":"object","properties":{"title":{"type":"string"}}}
	// raed a fiel → fs/read_text_file: Read the complete contents of a file as text.
	// 读取文件 → fs/read_text_file: Read the complete contents of a file as text.
}
