package hostview

import (
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/cordisgo/harness/internal/termsafe"
)

// ErrShown is the failure of an outcome a view has written for people with its cause (a
// failed probe): a command exits with a failure and says nothing more.
var ErrShown = errors.New("the failure is shown")

// Output is where a command's answer goes: its result on Out (tables wrapped to Width, 0:
// not wrapped), and what people should know beside it (a server's error, a page that has
// more, contents not written) on Notes as "PROG: note" lines. The views below write to it;
// it is safe for concurrent use as far as its writers are.
type Output struct {
	Out, Notes io.Writer
	Prog       string
	Width      int
}

// Note writes one note line, shown safe: it may quote a server (its error, its stderr).
func (o Output) Note(format string, args ...any) {
	fmt.Fprintf(o.Notes, "%s: %s\n", o.Prog, termsafe.String(fmt.Sprintf(format, args...)))
}

// JSON writes v on Out as indented JSON, as scripts read it ([JSON]); a nil slice is
// written as [], a list of nothing.
func (o Output) JSON(v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.IsNil() {
		v = []struct{}{}
	}
	b, err := JSON(v, "  ")
	if err != nil {
		return errors.New("encoding JSON: " + err.Error())
	}
	_, err = fmt.Fprintf(o.Out, "%s\n", b)
	return err
}

// Table writes rows (the first is the header) on Out ([Table]).
func (o Output) Table(rows [][]string) error { return Table(o.Out, o.Width, rows) }

// Columns writes rows under header on Out ([Columns]), or empty on Notes when there are
// none.
func (o Output) Columns(empty string, header []string, rows [][]string) error {
	if len(rows) == 0 {
		fmt.Fprintln(o.Notes, empty)
		return nil
	}
	return Columns(o.Out, header, rows)
}
