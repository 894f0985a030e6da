package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/profiles"
	"github.com/scopegate/scopegate/sessions"
)

// Error codes of the JSON error body {"error": {"code", "message"}}.
const (
	CodeBadRequest       = "bad_request"
	CodeInvalidJSON      = "invalid_json"
	CodeInvalidName      = "invalid_name"
	CodeInvalidConfig    = "invalid_config"
	CodeNotFound         = "not_found"
	CodeExists           = "exists"
	CodeInvalidExpansion = "invalid_expansion"
	CodeTooLarge         = "body_too_large"
	CodeUnauthorized     = "unauthorized"
	CodeForbiddenOrigin  = "forbidden_origin"
	CodeForbiddenHost    = "forbidden_host"
	CodeMethod           = "method_not_allowed"
	CodeTimeout          = "timeout"
	CodeInternal         = "internal"
	// CodeManaged is a scope change the machine's managed policy refuses.
	CodeManaged = "managed"
)

// apiError is an error with its HTTP status and code: handlers return
// them, the edge writes them.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, code, msg string) *apiError {
	return &apiError{status: status, code: code, msg: msg}
}

// errorBody is the contract's error document.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// classify maps an error of sessions, profiles or policy to a status and code.
func classify(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is larger than the limit")
	case errors.Is(err, profiles.ErrInvalid), errors.Is(err, profiles.ErrConflict):
		return errorf(http.StatusBadRequest, CodeInvalidConfig, err.Error())
	case errors.Is(err, sessions.ErrInvalidOptions):
		return errorf(http.StatusBadRequest, CodeBadRequest, err.Error())
	case errors.Is(err, sessions.ErrInvalidName), errors.Is(err, profiles.ErrInvalidName):
		return errorf(http.StatusBadRequest, CodeInvalidName, err.Error())
	case errors.Is(err, sessions.ErrNotFound), errors.Is(err, profiles.ErrNotFound):
		return errorf(http.StatusNotFound, CodeNotFound, err.Error())
	case errors.Is(err, sessions.ErrExists):
		return errorf(http.StatusConflict, CodeExists, err.Error())
	case errors.Is(err, gateway.ErrManagedRefused):
		return errorf(http.StatusForbidden, CodeManaged, err.Error())
	case errors.Is(err, sessions.ErrInvalidExpansion), errors.Is(err, policy.ErrInvalidScope):
		return errorf(http.StatusBadRequest, CodeInvalidExpansion, err.Error())
	case errors.Is(err, policy.ErrInvalidCall):
		return errorf(http.StatusBadRequest, CodeInvalidJSON, err.Error())
	}
	return errorf(http.StatusInternalServerError, CodeInternal, err.Error())
}

func writeError(w http.ResponseWriter, e *apiError) {
	var body errorBody
	body.Error.Code, body.Error.Message = e.code, e.msg
	writeJSON(w, e.status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"code":"internal","message":"encode response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// Two writes to the response's buffer, not a copy of data.
	w.Write(data)
	io.WriteString(w, "\n")
}
