package hostview

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// Dash is s, or "-" for an empty cell.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ViewStatus is the client status a server view reads as (for host.StatusLine).
func ViewStatus(v mcpmanager.View) mcpclient.Status {
	return mcpclient.Status{
		Server: v.Name, Phase: mcpclient.Phase(v.Status), Attempt: v.Attempt, MaxAttempts: v.MaxAttempts,
		Err: v.Error, StderrTail: v.StderrTail, Tools: v.Tools,
	}
}

// Probe prints a probe's outcome for people: a summary line, the
// tools, and for a failure the error and the end of the server's stderr.
func Probe(w io.Writer, out mcpmanager.ProbeResult) {
	stdout := termsafe.Writer(w) // the server's names, errors and stderr
	total := out.Timings.Total.Round(time.Millisecond)
	if !out.OK() {
		fmt.Fprintf(stdout, "%s: failed at %s after %v: %s\n", out.Name, out.Stage, total,
			strings.TrimPrefix(host.JoinLines(out.Err), fmt.Sprintf("mcp server %q: ", out.Name)))
		if tail := strings.TrimSpace(out.StderrTail); tail != "" {
			fmt.Fprintf(stdout, "stderr:\n%s\n", tail)
		}
		return
	}
	server := strings.TrimSpace(out.ServerName + " " + out.ServerVersion)
	fmt.Fprintf(stdout, "%s: ok in %v: %s over %s, protocol %s, %d tool%s", out.Name, total,
		Dash(server), out.Transport, out.ProtocolVersion, len(out.Tools), words.Plural(len(out.Tools)))
	if out.ToolsTruncated {
		fmt.Fprint(stdout, " (more not listed)")
	}
	if out.InstructionBytes > 0 {
		fmt.Fprintf(stdout, ", instructions (%d bytes)", out.InstructionBytes)
	}
	fmt.Fprintln(stdout)
	if d := strings.TrimSpace(out.ServerDescription); d != "" {
		fmt.Fprintln(stdout, d) // what the server says of itself (the workspace: its sandbox)
	}
	if len(out.Tools) == 0 {
		return
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tALLOWED\tDESCRIPTION")
	for _, t := range out.Tools {
		allowed := "yes"
		if !t.Allowed {
			allowed = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(t.Name), allowed, termsafe.Line(Summary(t.Description, 72)))
	}
	_ = tw.Flush()
}

// ProbeOutcome writes a probe's outcome ([Probe], or as it is with asJSON) and returns the
// probe's failure: a failed probe ([ErrShown] when written for people: the text says its
// cause), or one whose connection could not be cleaned up.
func (o Output) ProbeOutcome(out mcpmanager.ProbeResult, asJSON bool) error {
	if asJSON {
		if err := o.JSON(out); err != nil {
			return err
		}
	} else {
		Probe(o.Out, out)
	}
	switch {
	case !out.OK() && asJSON:
		return fmt.Errorf("probe of %s failed at %s: %s", out.Name, out.Stage, out.Err)
	case !out.OK():
		return ErrShown
	case out.Cleanup.Outcome != "" && out.Cleanup.Outcome != mcpclient.CleanupClosed:
		return fmt.Errorf("probe of %s: closing the connection: %s: %s", out.Name, out.Cleanup.Outcome, out.Cleanup.Err)
	}
	return nil
}

// Restarted writes a restart's outcome (mcp restart NAME): the server's status once
// connected, as a line, or as {"server": …} with asJSON. It returns the restart's failure:
// err (a restart refused before anything restarted, or a server that neither connected nor
// failed in time: v is its last status), or a server that failed.
func (o Output) Restarted(name string, v mcpmanager.View, err error, asJSON bool) error {
	if err != nil && v.Name == "" {
		return err // refused before anything restarted
	}
	if asJSON {
		if werr := o.JSON(host.RestartEvent{Server: v}); werr != nil {
			return werr
		}
	}
	switch {
	case err != nil:
		return err
	case v.Status != mcpmanager.StateConnected && !host.NotStarted(mcpclient.Phase(v.Status)):
		return fmt.Errorf("restarted, but mcp server %s", host.StatusLine(ViewStatus(v)))
	}
	if !asJSON {
		fmt.Fprintf(o.Out, "%s: restarted: %s\n", name, strings.TrimPrefix(host.StatusLine(ViewStatus(v)), v.Name+": "))
	}
	return nil
}

// ServerRows is the table of servers (the header first): name, status, transport, tool
// count, and the detail of a server that is not connected (its error, the attempt, the last
// line of its stderr) or what a connected one says of itself (its description).
func ServerRows(servers []mcpmanager.View) [][]string {
	rows := [][]string{{"NAME", "STATUS", "TRANSPORT", "TOOLS", "DETAIL"}}
	for _, s := range servers {
		detail := strings.TrimPrefix(s.Error, fmt.Sprintf("mcp server %q: ", s.Name))
		if s.Attempt > 0 && s.MaxAttempts > 0 && s.Status != mcpmanager.StateConnected {
			detail = fmt.Sprintf("attempt %d of %d: %s", s.Attempt, s.MaxAttempts, detail)
		}
		if tail := host.LastLine(s.StderrTail); tail != "" && s.Error != "" && s.Status != mcpmanager.StateConnected && !strings.Contains(detail, tail) {
			detail += " (stderr: " + tail + ")"
		}
		if detail == "" && s.ServerInfo != nil {
			detail = s.ServerInfo.Description // what a connected server says of itself (the workspace: its sandbox)
		}
		rows = append(rows, []string{s.Name, string(s.Status), Dash(s.Transport), strconv.Itoa(len(s.Tools)), host.JoinLines(detail)})
	}
	return rows
}

// ServerList writes a host's server list (mcp list): with asJSON as it is, else a table of
// its servers (or a note that there are none), followed by where the manager's settings
// files are (mcp add writes them; one that does not exist yet is said so). A profile
// without a manager has no files in the list: defaults, asked then, returns the files mcp
// add would write (ok false: none), said with a line that their servers do not run in
// this profile.
func (o Output) ServerList(l host.ServerList, asJSON bool, defaults func() (st mcpmanager.SettingsStatus, ok bool)) error {
	if asJSON {
		return o.JSON(l)
	}
	servers := append(slices.Clone(l.Servers), l.Unmanaged...)
	st := l.Settings
	if len(servers) == 0 {
		fmt.Fprintln(o.Notes, "no MCP servers")
		if st.File == "" && st.ProjectFile == "" {
			return nil
		}
	} else if err := o.Table(ServerRows(servers)); err != nil {
		return err
	}
	fmt.Fprintln(o.Out)
	if st.File == "" && st.ProjectFile == "" {
		var ok bool
		if st, ok = defaults(); !ok {
			return nil
		}
		fmt.Fprintln(o.Out, "this profile has no MCP server manager (plugins.manager), so the servers of the settings files (mcp add) do not run in it:")
	}
	for _, f := range []struct{ scope, path string }{{"user", st.File}, {"project", st.ProjectFile}} {
		if f.path == "" {
			continue
		}
		note := ""
		if _, err := os.Stat(f.path); err != nil {
			note = " (does not exist yet)"
		}
		fmt.Fprintf(o.Out, "%s settings: %s%s\n", f.scope, f.path, note)
	}
	return nil
}
