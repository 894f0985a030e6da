package policy_test

import "testing"

func TestProgWrappers(t *testing.T) {
	runProgCases(t, []string{"env", "timeout", "xargs", "nice", "cat", "ls", "unshare", "nsenter", "runuser", "su", "capsh", "bash"}, []progCase{
		{cmd: "timeout 5 ls"},
		{cmd: "env FOO=1 ls"},
		{cmd: "nice -n 10 cat a.json"},
		{cmd: "timeout 5 rm -rf .", reason: "command_not_allowed"},
		{cmd: "env -S 'rm -rf .'", reason: "command_not_allowed"},
		{cmd: "env PATH=OUT ls", reason: "dangerous_argument"},
		{cmd: "xargs rm < a.json", reason: "command_not_allowed"},
		{cmd: "nice cat .env", reason: "path_denied"},
		{cmd: "unshare -r ls"},
		{cmd: "unshare -m -- ls"},
		{cmd: "unshare id", reason: "command_not_allowed"},
		{cmd: "unshare -r -- id", reason: "command_not_allowed"},
		{cmd: "unshare -R OUT ls", reason: "dangerous_argument"},
		{cmd: "nsenter -t 1 -m ls", reason: "dangerous_argument"},
		{cmd: "nsenter --net=/run/netns/x id", reason: "command_not_allowed"},
		{cmd: "runuser -u nobody -- ls"},
		{cmd: "runuser -u nobody id", reason: "command_not_allowed"},
		{cmd: "runuser -u nobody -c id", reason: "dangerous_argument"},
		{cmd: "runuser nobody", reason: "command_not_allowed"},
		{cmd: "runuser nobody x.sh", reason: "command_not_allowed"},
		{cmd: "su -c id", reason: "dangerous_argument"},
		{cmd: "su nobody -- -c id", reason: "dangerous_argument"},
		{cmd: "capsh --print"},
		{cmd: "capsh --drop=cap_net_raw -- -c ls"},
		{cmd: "capsh -- -c id", reason: "command_not_allowed"},
		{cmd: "capsh == -- -c id", reason: "dangerous_argument"},
	})
}
