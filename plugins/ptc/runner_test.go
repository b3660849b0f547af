package ptc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/ptc"
)

func TestReturnAndConsole(t *testing.T) {
	e := newEnv(t, defaults(), textTool("upper", true, func(a map[string]any) (string, error) {
		return strings.ToUpper(fmt.Sprint(a["s"])), nil
	}))
	out := e.run(`const r = await tools["upper"]({s: "abc"});
console.log("got", r.content[0].text, {n: 1});
const n: number = 2;
return {text: r.content[0].text, n};`)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if string(out.Value) != `{"text":"ABC","n":2}` || out.Console != "got ABC {\"n\":1}\n" {
		t.Fatalf("value %s console %q", out.Value, out.Console)
	}
	if len(out.Calls) != 1 || out.Calls[0].ID != "c1:code:1" || out.Calls[0].Tool != "upper" {
		t.Fatalf("calls %+v", out.Calls)
	}
}

func TestThrownErrorNamesLine(t *testing.T) {
	e := newEnv(t, defaults(), textTool("fail", false, func(map[string]any) (string, error) {
		return "", errors.New("no such file")
	}))
	out := e.run("const a = 1;\n\nthrow new Error(`boom ${a}`);")
	if !errors.Is(out.Err, ptc.ErrException) || out.Err.Line != 3 || out.Err.Msg != "Error: boom 1" {
		t.Fatalf("err %+v", out.Err)
	}
	out = e.run("type T = {a: string};\nconst x: T = {a: 'x'};\nawait tools.fail({});\nreturn 1;")
	if !errors.Is(out.Err, ptc.ErrException) || out.Err.Line != 3 || !strings.Contains(out.Err.Msg, "ToolCallError") || !strings.Contains(out.Err.Msg, "no such file") {
		t.Fatalf("err %+v", out.Err)
	}
	out = e.run("try { await tools.fail({}) } catch (e) { return [e instanceof ToolCallError, e.tool, e.code, e.message] }")
	if out.Err != nil || string(out.Value) != `[true,"fail","tool_error","no such file"]` {
		t.Fatalf("value %s err %v", out.Value, out.Err)
	}
}
