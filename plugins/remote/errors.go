package remote

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cordisgo/harness/ctx"
)

// Code is a remote API error code, such as "not_found": the one type of the codes that
// hosts send and clients match, for every service. A method chooses its code by returning
// an [*Error] ([Errorf]) or an error with a RemoteCode method; see the package
// documentation for the HTTP status of each.
type Code string

// Error codes. The transport's own codes come first; the rest are codes a method may
// return (through a RemoteCode method on its error) that map to a specific HTTP status.
// Any other code a method returns is passed through with status 500.
const (
	// CodeUnauthorized: the bearer token is missing or wrong (401).
	CodeUnauthorized = "unauthorized"
	// CodeForbiddenOrigin: the request carries an Origin that is not a loopback origin (403).
	CodeForbiddenOrigin = "forbidden_origin"
	// CodeForbiddenHost: the Host header does not name the loopback; this defends against
	// DNS rebinding (403).
	CodeForbiddenHost = "forbidden_host"
	// CodeNotFound: no such path or remote method, or the method is of the other kind (404).
	// Methods may use it for a missing entity.
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed: the HTTP method is not accepted on that path (405).
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeBadRequest: the parameters are not valid JSON (400). Methods may use it for
	// parameters they reject.
	CodeBadRequest = "bad_request"
	// CodeTooLarge: the request body exceeds maxBodyBytes (413).
	CodeTooLarge = "too_large"
	// CodeMethodError: the method failed without a code of its own (500).
	CodeMethodError = "method_error"
	// CodeInternal: the transport failed, e.g. a result could not be encoded as JSON or a
	// method panicked (500).
	CodeInternal = "internal"
	// CodeCancelled: the host is shutting down (or the client left) while the method ran
	// (503).
	CodeCancelled = "cancelled"

	// CodeConflict: a method refuses because of the current state, e.g. a name already in
	// use or a replacement already running (409).
	CodeConflict = "conflict"
	// CodeUnavailable: a method's dependency is temporarily unavailable (503).
	CodeUnavailable = "unavailable"
	// CodeTimeout: a method gave up waiting (504).
	CodeTimeout = "timeout"
	// CodeUnimplemented: a method does not support the requested operation (501).
	CodeUnimplemented = "unimplemented"
)

// methodStatus maps the codes a method may return to HTTP statuses.
var methodStatus = map[Code]int{
	CodeBadRequest:    http.StatusBadRequest,
	CodeNotFound:      http.StatusNotFound,
	CodeConflict:      http.StatusConflict,
	CodeUnavailable:   http.StatusServiceUnavailable,
	CodeTimeout:       http.StatusGatewayTimeout,
	CodeUnimplemented: http.StatusNotImplemented,
	CodeCancelled:     http.StatusServiceUnavailable,
}

// validCode reports whether code has the shape of a code a method may return,
// ^[a-z][a-z0-9_./-]{0,63}$; anything else becomes [CodeMethodError] so the wire format stays
// predictable. (Written out: compiling the regular expression cost every process that links
// this package a fraction of a millisecond at start.)
func validCode(code Code) bool {
	if len(code) == 0 || len(code) > 64 || code[0] < 'a' || code[0] > 'z' {
		return false
	}
	for i := 1; i < len(code); i++ {
		switch b := code[i]; {
		case 'a' <= b && b <= 'z', '0' <= b && b <= '9', b == '_', b == '.', b == '/', b == '-':
		default:
			return false
		}
	}
	return true
}

// Error is the error of the remote API: the JSON body {"error": {"code", "message"}} of
// every refused request, the payload of a stream's "error" event, and what [Client]
// methods return when the host answers with one.
//
// A method may return an *Error (or any error with a RemoteCode() Code method) to choose
// its code; the host then derives the HTTP status from the code (see the package
// documentation) and ignores Status.
type Error struct {
	// Code is a stable, machine-readable code such as "not_found".
	Code Code `json:"code"`
	// Message is a human-readable explanation.
	Message string `json:"message"`
	// Status is the HTTP status the host answered with (0 for a stream's error event).
	Status int `json:"-"`
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (e *Error) Error() string { return "remote: " + string(e.Code) + ": " + e.Message }

// RemoteCode returns the code, so an *Error passes through a host unchanged.
func (e *Error) RemoteCode() Code { return e.Code }

// CodeOf returns the code a host answers err with, as [Error] carries it: the code of the
// first error in err's chain with a RemoteCode method, [CodeBadRequest] for a
// [*ctx.ParamsError], else [CodeMethodError]. On a client, it is the code of the *Error
// the host answered.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	e, _ := methodError(err)
	return e.Code
}

// errorBody is the JSON envelope of an error.
type errorBody struct {
	Error *Error `json:"error"`
}

// coder is what a method's error implements to choose its code.
type coder interface {
	error
	RemoteCode() Code
}

// methodError turns a method's error into the wire error and its status.
func methodError(err error) (*Error, int) {
	e := &Error{Code: CodeMethodError, Message: err.Error()}
	if re, ok := err.(*Error); ok { //nolint:errorlint // only err itself: a wrapped *Error keeps the wrapping text
		e.Message = re.Message // not "remote: <code>: …" again
	}
	if _, ok := errors.AsType[*ctx.ParamsError](err); ok {
		e.Code = CodeBadRequest
	}
	if c, ok := errors.AsType[coder](err); ok {
		if code := c.RemoteCode(); validCode(code) {
			e.Code = code
		}
	}
	status, ok := methodStatus[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return e, status
}
