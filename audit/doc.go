// Package audit keeps a session branch's audit trail: the tools.org log with
// one Org level-1 heading per decision, its reader, the in-flight journal that
// turns calls cut off by a crash into INTERRUPTED entries, and the
// system-prompts.org change log.
//
// Everything written comes from untrusted calls, so text is escaped before it
// reaches the file: headlines and property values are one line (control
// characters, backslashes and invalid UTF-8 shown as backslash escapes), and
// block lines that Org could read as a heading or a block end get Org's own
// comma escape. The reader undoes both.
//
// # The chain
//
// Every entry [Log.Append] writes ends its property drawer with
//
//	:CHAIN_SEQ: N
//	:CHAIN:    <64 lower-case hex digits>
//
// N numbers the branch's chained entries from 1. The :CHAIN: value is
// SHA-256(text ‖ previous), in hex, where previous is the :CHAIN: value of
// entry N-1 (empty for entry 1) and text is the entry's exact bytes as
// written, from the "*" of its headline up to and including the newline
// that ends its last non-empty line before the next level-1 headline (or
// the end of the file), with only the
// 64 hex digits of its own :CHAIN: value taken out (that line then reads
// ":CHAIN:" and four spaces). Calls, checks, hook decisions, INTERRUPTED
// records and scope changes are all such entries. The chain value of the
// previous entry is read under the same lock as the append, and entries
// written in one grouped write are each chained to the one before.
//
// The latest N, value and the file's size after it are also kept in the
// chain head beside tools.org ([ChainHeadPath]), replaced atomically under
// the same lock, so that a cut tail is found. [Verify] checks both; headings
// of other programs (gptel's own "* Tool Call:" entries) have no :CHAIN: and
// are skipped and listed, never counted as breaks.
//
// The chain makes changes to tools.org evident; it is not a signature: a
// process that rewrites both tools.org and the head can forge a chain that
// holds.
package audit
