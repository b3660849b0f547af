package atomicfile_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/atomicfile"
)

func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

func TestWriteNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "state.json")
	if err := atomicfile.Write(path, []byte("one"), atomicfile.Options{}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("missing directory without DirMode: err = %v, want ErrNotExist naming %s", err, path)
	}
	if err := atomicfile.Write(path, []byte("one"), atomicfile.Options{DirMode: 0o700}); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("two"), atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Fatalf("content = %q, %v; want two", got, err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode = %v, %v; want 0600", fi.Mode().Perm(), err)
		}
		di, err := os.Stat(filepath.Dir(path))
		if err != nil || di.Mode().Perm() != 0o700 {
			t.Fatalf("dir mode = %v, %v; want 0700", di.Mode().Perm(), err)
		}
	}
	if l := leftovers(t, filepath.Dir(path)); l != nil {
		t.Fatalf("temporary files left: %v", l)
	}
}

func TestModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are not kept on windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.yaml")
	if err := atomicfile.Write(path, []byte("a: 1\n"), atomicfile.Options{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("a: 2\n"), atomicfile.Options{Mode: 0o644, KeepMode: true}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("KeepMode: mode = %v, %v; want the file's 0640", fi.Mode().Perm(), err)
	}
	if err := atomicfile.Write(path, []byte("a: 3\n"), atomicfile.Options{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("Mode: mode = %v, %v; want 0644", fi.Mode().Perm(), err)
	}
}

func TestCheckKeepsLastGoodFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(path, []byte("good\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var seen string
	check := func(tmp string) error {
		if filepath.Dir(tmp) != dir || filepath.Ext(tmp) != ".yaml" {
			t.Errorf("check got %s; want a .yaml file in %s", tmp, dir)
		}
		b, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		seen = string(b)
		if strings.Contains(seen, "bad") {
			return fmt.Errorf("%s: line 1: bad value", tmp)
		}
		return nil
	}
	err := atomicfile.Write(path, []byte("bad\n"), atomicfile.Options{Check: check})
	var ce *atomicfile.CheckError
	if !errors.As(err, &ce) || !errors.Is(err, atomicfile.ErrCheck) {
		t.Fatalf("err = %v; want a CheckError matching ErrCheck", err)
	}
	if want := path + " not written: " + path + ": line 1: bad value"; err.Error() != want {
		t.Fatalf("err = %q; want %q (the temporary name replaced by the file's)", err, want)
	}
	if seen != "bad\n" {
		t.Fatalf("check read %q; want the written content", seen)
	}
	if got, _ := os.ReadFile(path); string(got) != "good\n" {
		t.Fatalf("after a failed check the file holds %q; want the last good content", got)
	}
	if l := leftovers(t, dir); l != nil {
		t.Fatalf("temporary files left: %v", l)
	}
	if err := atomicfile.Write(path, []byte("fine\n"), atomicfile.Options{Check: check, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "fine\n" {
		t.Fatalf("file holds %q; want fine", got)
	}
}

func TestRenameOverDirectoryFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.Write(path, []byte("x"), atomicfile.Options{})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v; want an error naming %s", err, path)
	}
	if l := leftovers(t, dir); l != nil {
		t.Fatalf("temporary files left: %v", l)
	}
}

func Example() {
	dir, err := os.MkdirTemp("", "atomicfile-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "config", "limits.txt")
	opts := atomicfile.Options{
		DirMode: 0o700,
		Check: func(tmp string) error {
			b, err := os.ReadFile(tmp)
			if err != nil {
				return err
			}
			if strings.TrimSpace(string(b)) == "" {
				return errors.New("empty")
			}
			return nil
		},
	}
	fmt.Println(atomicfile.Write(path, []byte("max=3\n"), opts))
	err = atomicfile.Write(path, []byte("\n"), opts)
	fmt.Println(errors.Is(err, atomicfile.ErrCheck))
	b, _ := os.ReadFile(path)
	fmt.Printf("%q\n", b)
	// Output:
	// <nil>
	// true
	// "max=3\n"
}
