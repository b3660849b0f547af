// Package web holds the management page of the remote API: plain HTML, CSS and a little
// JavaScript, embedded in the binary so the page works offline and needs no CDN. The
// remote plugin serves these files at "/" (see plugins/remote); the page talks to the host
// only through the remote API (mcpManager/*, console/*), with the session cookie the page
// gets by exchanging the token it finds in its URL's fragment.
//
// The files are immutable; [FS] is safe for concurrent use.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Files lists the page's files, each served at "/<name>"; "index.html" is also "/". The
// vendor directory holds the MCP Apps host bridge, bundled from pinned npm packages by
// extapps/build.mjs (its header says how), with their licences.
var Files = []string{"index.html", "app.css", "app.js", "icon.svg", "vendor/ext-apps-bridge.js", "vendor/ext-apps-bridge.LICENSES.txt"}

// SandboxScript is the script of the apps' sandbox proxy, which the remote plugin serves
// on its sandbox listener only (never beside the page: it must run in another origin).
const SandboxScript = "sandbox.js"

// FS returns the page's files, rooted so that "index.html" is the page.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded: cannot happen
	}
	return sub
}
