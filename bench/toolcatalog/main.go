// Command toolcatalog lists the tools of MCP servers and writes them as a tool-search catalog
// (the format of docs/tool-search.md): {"servers": {"NAME": {"instructions": "…", "tools":
// [Tool…]}}}, each Tool exactly as the server's tools/list returned it, with the server's
// serverInfo (name, title, version) from its initialize result.
//
// It reads a JSON list of servers on standard input, each {"name", "command", "args", "env"},
// starts each over stdio with the go-sdk client, drains tools/list and writes the catalog to
// standard output (sorted keys). A server that fails is reported on standard error and left
// out. It is how toolsearch/testdata/catalog.json was made (see the SOURCES file
// beside it).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type server struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

type entry struct {
	ServerInfo   *mcp.Implementation `json:"serverInfo,omitempty"`
	Instructions string              `json:"instructions,omitempty"`
	Tools        []*mcp.Tool         `json:"tools"`
}

func main() {
	var servers []server
	if err := json.NewDecoder(os.Stdin).Decode(&servers); err != nil {
		fmt.Fprintln(os.Stderr, "toolcatalog: reading the server list:", err)
		os.Exit(2)
	}
	out := map[string]*entry{}
	for _, s := range servers {
		e, err := list(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "toolcatalog: %s: %v\n", s.Name, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "toolcatalog: %s: %d tools\n", s.Name, len(e.Tools))
		out[s.Name] = e
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(map[string]any{"servers": out}); err != nil {
		fmt.Fprintln(os.Stderr, "toolcatalog:", err)
		os.Exit(1)
	}
}

func list(s server) (*entry, error) {
	cx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolcatalog", Version: "1"}, nil)
	session, err := client.Connect(cx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = session.Close() }()
	e := &entry{Tools: []*mcp.Tool{}}
	if r := session.InitializeResult(); r != nil {
		e.Instructions = r.Instructions
		e.ServerInfo = r.ServerInfo
	}
	for t, err := range session.Tools(cx, nil) {
		if err != nil {
			return nil, err
		}
		e.Tools = append(e.Tools, t)
	}
	return e, nil
}
