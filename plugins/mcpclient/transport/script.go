package transport

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// interpreters are the programs whose first argument that is not a flag names the script
// they run: a stdio server configured as `node server.js` whose script does not exist can
// never start, so it fails at once, like a missing executable, instead of after every
// retry of a process that prints "Cannot find module" and exits.
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "python": true, "python3": true,
	"python2": true, "ruby": true, "perl": true, "php": true, "bash": true, "sh": true, "zsh": true,
}

// scriptExtensions are the extensions of a script argument that is checked (a bare word
// may be a module name or a subcommand: `python -m server`, `bun run x`).
var scriptExtensions = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".rb", ".pl", ".php", ".sh"}

// MissingScript returns an *fs.PathError when command is an interpreter (node, python, …)
// whose script argument — the first of args that is not a flag, with a script's extension
// — does not exist, relative to dir; nil otherwise (including when the interpreter reads
// its program from a flag: `node -e`, `python -m`, `python -c`). [NewProcess] checks it: a
// missing script is a permanent failure, like a missing executable.
func MissingScript(command string, args []string, dir string) error {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(command)), ".exe")
	if !interpreters[base] {
		return nil
	}
	for _, arg := range args {
		if strings.HasPrefix(arg, "-") {
			switch arg {
			case "-e", "--eval", "-p", "--print", "-m", "-c", "-":
				return nil // the program is not a file
			}
			continue
		}
		if !hasScriptExtension(arg) {
			return nil
		}
		path := arg
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		if _, err := os.Stat(path); err != nil && os.IsNotExist(err) {
			return &fs.PathError{Op: "run " + base + " script", Path: arg, Err: fs.ErrNotExist}
		}
		return nil
	}
	return nil
}

func hasScriptExtension(arg string) bool {
	ext := strings.ToLower(filepath.Ext(arg))
	for _, e := range scriptExtensions {
		if ext == e {
			return true
		}
	}
	return false
}
