package toolsearch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Server is one server's tools as the index takes them: plain data, from the live registry
// ([FromRegistry]) or from a catalog file ([ParseCatalog]).
//
// A Server is a plain value; the index copies what it keeps.
type Server struct {
	// Name is the server's name ("" for tools that belong to no server).
	Name string
	// Instructions are the server's instructions (its initialize result); they are
	// indexed with a low weight.
	Instructions string
	// Aliases are other names the server goes by — the name and title of its serverInfo,
	// its package's name — indexed with its name.
	Aliases []string
	Tools   []Tool
}

// Tool is one tool as the index takes it.
//
// A Tool is a plain value; treat its schema bytes as immutable.
type Tool struct {
	// Name is the tool's name as its server lists it (the raw MCP name).
	Name string `json:"name"`
	// PublicName is the name the model calls it by (mcp__server__tool); empty means Name.
	PublicName string `json:"publicName,omitempty"`
	// Title is the tool's display title, if any.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON schema of the arguments, bytes as the server sent them.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Catalog is the on-disk catalog format: the tools/list results of a fleet, keyed by server
// name. Each tool is an MCP Tool object exactly as the server listed it (name, title,
// description, inputSchema; other members are ignored):
//
//	{"servers": {"github": {"instructions": "…", "tools": [{"name": "create_issue", …}]}}}
//
// "instructions" is optional. A Catalog is a plain value.
type Catalog struct {
	Servers map[string]CatalogServer `json:"servers"`
}

// CatalogServer is one server of a [Catalog]. ServerInfo is the server's initialize
// serverInfo (only its name and title are read); its name and title become the server's
// [Server.Aliases].
type CatalogServer struct {
	ServerInfo *struct {
		Name  string `json:"name"`
		Title string `json:"title,omitempty"`
	} `json:"serverInfo,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	Tools        []Tool `json:"tools"`
}

// ErrCatalog is wrapped by the errors of [ParseCatalog] and [ReadCatalog].
var ErrCatalog = errors.New("invalid tool catalog")

// ParseCatalog decodes a catalog document and returns its servers sorted by name, each
// server's tools in the order listed. name is used in errors (a file name).
func ParseCatalog(name string, data []byte) ([]Server, error) {
	var c Catalog
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s: %w (expected {\"servers\": {\"NAME\": {\"tools\": [Tool...]}}})", ErrCatalog, name, err)
	}
	if c.Servers == nil {
		return nil, fmt.Errorf("%w: %s: no \"servers\" object (expected {\"servers\": {\"NAME\": {\"tools\": [Tool...]}}})", ErrCatalog, name)
	}
	out := make([]Server, 0, len(c.Servers))
	for sname, s := range c.Servers {
		for i, t := range s.Tools {
			if strings.TrimSpace(t.Name) == "" {
				return nil, fmt.Errorf("%w: %s: servers.%s.tools[%d] has no \"name\"", ErrCatalog, name, sname, i)
			}
		}
		srv := Server{Name: sname, Instructions: s.Instructions, Tools: s.Tools}
		if si := s.ServerInfo; si != nil {
			for _, a := range []string{si.Name, si.Title} {
				if a != "" && a != sname && !slices.Contains(srv.Aliases, a) {
					srv.Aliases = append(srv.Aliases, a)
				}
			}
		}
		out = append(out, srv)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ReadCatalog reads and parses the catalog file at path (see [ParseCatalog]).
func ReadCatalog(path string) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCatalog, err)
	}
	return ParseCatalog(path, data)
}
