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
package audit
