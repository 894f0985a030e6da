package policy_test

import "testing"

func TestProgArchives(t *testing.T) {
	runProgCases(t, []string{"tar", "zip", "unzip"}, []progCase{
		{cmd: "tar -czf out.tgz src"},
		{cmd: "tar xzf out.tgz -C src"},
		{cmd: "tar -tf out.tgz"},
		{cmd: "tar -xf out.tgz -C OUT", reason: "path_not_in_scope"},
		{cmd: "tar -cf OUT/x.tar src", reason: "path_not_in_scope"},
		{cmd: "tar -xf x.tar --to-command=sh", reason: "dangerous_argument"},
		{cmd: "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec=id src", reason: "dangerous_argument"},
		{cmd: "tar -cf x.tar -I 'sh -c id' src", reason: "dangerous_argument"},
		{cmd: "tar -cf host:x.tar src", reason: "dangerous_argument"},
		{cmd: "tar -czf out.tgz .", reason: "path_denied"},
		{cmd: "zip -r out.zip .", reason: "path_denied"},
		{cmd: "zip out.zip a.json -TT 'sh -c id' -T", reason: "dangerous_argument"},
		{cmd: "unzip -d OUT x.zip", reason: "path_not_in_scope"},
	})
}
