package policy_test

import "testing"

func TestProgGoMake(t *testing.T) {
	runProgCases(t, []string{"go", "make"}, []progCase{
		{cmd: "go build ./..."},
		{cmd: "go test -race -count=1 ./..."},
		{cmd: "go vet ./..."},
		{cmd: "make test"},
		{cmd: "make -C src"},
		{cmd: "go test -exec 'sh -c' ./...", reason: "dangerous_argument"},
		{cmd: "go build -toolexec sh ./...", reason: "dangerous_argument"},
		{cmd: "go generate ./...", reason: "dangerous_argument"},
		{cmd: "go run example.com/x@latest", reason: "dangerous_argument"},
		{cmd: "go env -w GOFLAGS=-x", reason: "dangerous_argument"},
		{cmd: "go build -o OUT/bin .", reason: "path_not_in_scope"},
		{cmd: "make SHELL=/tmp/x test", reason: "dangerous_argument"},
		{cmd: "make --eval='x:;id' x", reason: "dangerous_argument"},
		{cmd: "make -f OUT/Makefile", reason: "path_not_in_scope"},
	})
}
