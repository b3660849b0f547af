package toolsearch

import "testing"

// Each ranking rule, as the first hit of tasks over a few tools: each query maps to the
// tool (SERVER/TOOL) that must come first.
func TestFirstHit(t *testing.T) {
	for _, c := range []struct {
		name    string
		servers []Server
		want    map[string]string
	}{
		// Two words next to each other in the task favour the tool that has them next to
		// each other, in that order.
		{"words in a row", []Server{{Name: "tracker", Tools: []Tool{
			{Name: "update_project", Description: "Update a project: its name, lead and dates."},
			{Name: "create_project_update", Description: "Create a project update to tell followers how it goes."},
		}}}, map[string]string{
			"post a project update saying we're on track": "tracker/create_project_update",
			"update the project's lead":                   "tracker/update_project",
		}},
		// A question asks to look: of two tools equally near its words, the one whose name
		// leads with a verb that changes something comes second, unless the question has
		// such a verb.
		{"questions ask to look", []Server{{Name: "browser", Tools: []Tool{
			{Name: "browser_new_tab", Description: "Open a new tab."},
			{Name: "browser_tab_list", Description: "List the tabs open in the browser."},
		}}}, map[string]string{
			"which tabs are open right now": "browser/browser_tab_list",
			"open a new tab":                "browser/browser_new_tab",
			"how do I open a new tab?":      "browser/browser_new_tab",
		}},
		// A word found only in a server's instructions counts less in its tools' coverage
		// of the task than a word of a tool's own text: the instructions are about the
		// server.
		{"instructions count less in coverage", []Server{
			{Name: "mail", Instructions: "Only the folders you are allowed to touch are listed.", Tools: []Tool{
				{Name: "delete_mail_folder", Description: "Delete a mail folder."},
			}},
			{Name: "files", Tools: []Tool{
				{Name: "list_allowed_directories", Description: "List the directories this server is allowed to access."},
			}},
		}, map[string]string{"which folders are you allowed to touch": "files/list_allowed_directories"}},
		// A task that leads with a verb prefers, among tools equally near its words, those
		// whose name leads with a verb of the same class: cancel is stop's, not start's.
		{"lead verbs agree", []Server{{Name: "desktop", Tools: []Tool{
			{Name: "start_search", Description: "Start a file search that runs in the background."},
			{Name: "stop_search", Description: "Stop a file search."},
			{Name: "read_file", Description: "Read a file."},
			{Name: "list_processes", Description: "List the processes running in the background."},
		}}}, map[string]string{
			"cancel the file search that runs":       "desktop/stop_search",
			"help me kill the file search that runs": "desktop/stop_search",
			"start a file search in the background":  "desktop/start_search",
		}},
		// The words of a subordinate clause (TestSplitClauses) say when or why, not what:
		// they weigh less and are not needed.
		{"subordinate clauses weigh less", []Server{
			{Name: "fs", Tools: []Tool{{Name: "copy_file", Description: "Copy a file or a directory."}}},
			{Name: "cloud", Tools: []Tool{{Name: "start_database_migration", Description: "Start an online migration of a database cluster."}}},
		}, map[string]string{"make a copy of the database file before I migrate": "fs/copy_file"}},
		// A tool's exact name in a task ranks it first, unless the name is a plain word that
		// the task uses as a word.
		{"plain words are not names", []Server{
			{Name: "mongodb", Tools: []Tool{{Name: "find", Description: "Run a find query against a collection."}}},
			{Name: "gmail", Tools: []Tool{{Name: "search_emails", Description: "Search for emails."}}},
		}, map[string]string{
			"find the emails from my bank":           "gmail/search_emails",
			"use `find` for the emails from my bank": "mongodb/find",
			"call search_emails":                     "gmail/search_emails",
		}},
	} {
		ix := New(c.servers)
		for q, want := range c.want {
			got := ""
			if hits := ix.Search(q, SearchOptions{}); len(hits) > 0 {
				got = hits[0].Server + "/" + hits[0].Name
			}
			if got != want {
				t.Errorf("%s: %q: first hit %s, want %s", c.name, q, got, want)
			}
		}
	}
}

// A subordinate clause runs from "before", "saying", "so", … to the end of the sentence.
func TestSplitClauses(t *testing.T) {
	main, sub := splitClauses("copy it before I migrate. Then tell me so")
	if main != "copy it Then tell me " || sub != "before I migrate. so " {
		t.Errorf("splitClauses: main %q, sub %q", main, sub)
	}
}

// A task is a question that asks to look when it reads as a question and names no verb
// that changes something.
func TestAsksToLook(t *testing.T) {
	ix := New([]Server{{Name: "s", Tools: []Tool{{Name: "create_folder", Description: "Create a folder."}}}})
	for q, want := range map[string]bool{
		"which tabs are open right now":     true,
		"what's my balance":                 true,
		"is coolstartup.io available":       true,
		"上海这周末会下雨吗":                         true,
		"有哪些打开的标签页":                         true,
		"how do I create a folder?":         false,
		"哪个文件夹可以新建":                         false,
		"create a folder called reports":    false,
		"the tabs that are open, list them": false,
	} {
		if got := asksToLook(q, first(ix.parse(q))); got != want {
			t.Errorf("asksToLook(%q) = %v, want %v", q, got, want)
		}
	}
}

func first[A, B any](a A, _ B) A { return a }
