package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/userdirs"
	"github.com/cordisgo/harness/internal/yamlnode"
)

// Credentials resolves ${secret:NAME} references.
//
// Lookup must be safe for concurrent use, and its errors must never contain a secret
// value: they end up in server views and logs.
type Credentials interface {
	// Lookup returns the secret called name, or an error saying why there is none.
	Lookup(name string) (string, error)
}

// CredentialsKey is the optional credentials service that ${secret:NAME} references read.
// When a plugin provides it, the client (for a profile row) and the MCP manager (for its
// entries) resolve secrets through it; otherwise through a [FileCredentials] on the
// default credentials file (the manager's credentialsFile setting overrides it). It is
// looked up at each resolution.
var CredentialsKey = ctx.NewKey[Credentials]("mcpCredentials")

// ErrSecretNotFound is matched (errors.Is) when a credentials provider has no secret of
// the requested name.
var ErrSecretNotFound = errors.New("secret not found")

// FileCredentials is a [Credentials] provider backed by a YAML (or JSON) file mapping
// secret names to values:
//
//	github: ghp_xxxxxxxxxxxxxxxx
//	openai-key: sk-xxxxxxxx
//
// The file must not be readable or writable by the group or others (mode 0600 or
// stricter); any other mode is refused with an error telling how to fix it. It is read on
// every lookup, so edits take effect at the next mount or probe. Values are never logged
// and never appear in errors.
//
// A FileCredentials is immutable and safe for concurrent use.
type FileCredentials struct {
	path string
}

// NewFileCredentials returns a provider reading path.
func NewFileCredentials(path string) *FileCredentials { return &FileCredentials{path: path} }

// Path returns the file the provider reads.
func (f *FileCredentials) Path() string { return f.path }

// DefaultCredentialsFile returns credentials.yaml in the "harness" directory of the user's
// configuration directory in the process's environment (userdirs.Env.Config: on Linux
// $XDG_CONFIG_HOME/harness/credentials.yaml or ~/.config/harness/credentials.yaml).
func DefaultCredentialsFile() (string, error) {
	dir, err := userdirs.Env{}.Config()
	if err != nil {
		return "", fmt.Errorf("no default location for credentialsFile (set it explicitly): %w", err)
	}
	return filepath.Join(dir, "harness", "credentials.yaml"), nil
}

// Available reports whether the file exists, so that a missing file reads as "no
// credentials provider" rather than a missing secret.
func (f *FileCredentials) Available() error {
	if _, err := os.Stat(f.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: credentials file %s does not exist", ErrNoCredentials, f.path)
		}
		return fmt.Errorf("%w: credentials file %s: %w", ErrNoCredentials, f.path, pathErr(err))
	}
	return nil
}

// Lookup reads the file and returns the secret called name.
func (f *FileCredentials) Lookup(name string) (string, error) {
	secrets, err := f.load()
	if err != nil {
		return "", err
	}
	v, ok := secrets[name]
	if !ok {
		return "", fmt.Errorf("%w: no secret %q in credentials file %s", ErrSecretNotFound, name, f.path)
	}
	return v, nil
}

// load reads and checks the file. Errors describe the problem without the file's content.
func (f *FileCredentials) load() (map[string]string, error) {
	file, err := os.Open(f.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: credentials file %s does not exist", ErrNoCredentials, f.path)
		}
		return nil, fmt.Errorf("credentials file %s: %w", f.path, pathErr(err))
	}
	defer func() { _ = file.Close() }()
	st, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", f.path, pathErr(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("credentials file %s is not a regular file", f.path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("credentials file %s has mode %04o, which lets other users read or change it; it must be 0600 (chmod 600 %s)", f.path, perm, f.path)
	}
	const maxSize = 1 << 20
	if st.Size() > maxSize {
		return nil, fmt.Errorf("credentials file %s is larger than %d bytes", f.path, maxSize)
	}
	data := make([]byte, st.Size())
	if _, err := file.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("credentials file %s: %w", f.path, pathErr(err))
	}
	return parseCredentials(f.path, data)
}

// parseCredentials decodes a mapping of names to scalar values. Errors carry lines, never
// values.
func parseCredentials(path string, data []byte) (map[string]string, error) {
	out := make(map[string]string)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if line, text := yamlnode.SyntaxError(data, err); line > 0 {
			return nil, fmt.Errorf("credentials file %s: line %d: not valid YAML or JSON: %s", path, line, text)
		}
		return nil, fmt.Errorf("credentials file %s is not valid YAML or JSON: %s", path, yamlnode.ErrorText(err))
	}
	if len(doc.Content) == 0 {
		return out, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("credentials file %s: expected a mapping of secret name to value, got %s", path, yamlnode.Kind(root))
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode || !validSecretName(k.Value) {
			return nil, fmt.Errorf("credentials file %s: line %d: a secret name is 1 to 128 of [A-Za-z0-9_.-]", path, k.Line)
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, fmt.Errorf("credentials file %s: line %d: secret %q: expected a string, got %s", path, v.Line, k.Value, yamlnode.Kind(v))
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("credentials file %s: line %d: secret %q is defined twice", path, k.Line, k.Value)
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// CredentialsFor returns the credentials that ${secret:NAME} references read at c's scope:
// the [CredentialsKey] service when one is provided, else the default credentials file when
// it exists (else an error wrapping [ErrNoCredentials]). The MCP clients and the model
// service's API keys resolve through it.
func CredentialsFor(c *ctx.Context) (Credentials, error) {
	if cr, ok := CredentialsKey.Get(c); ok && cr != nil {
		return cr, nil
	}
	return DefaultCredentials()
}

// DefaultCredentials returns a [FileCredentials] on [DefaultCredentialsFile] when that file
// exists, else an error wrapping [ErrNoCredentials].
func DefaultCredentials() (Credentials, error) {
	path, err := DefaultCredentialsFile()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoCredentials, err)
	}
	fc := NewFileCredentials(path)
	if err := fc.Available(); err != nil {
		return nil, err
	}
	return fc, nil
}

// pathErr drops the operation and path of a *fs.PathError (the path is said already).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
