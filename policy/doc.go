// Package policy decides whether one tool call stays inside a session's scope.
//
// It is pure: a compiled [Scope], a [Call] and an [Env] (the filesystem view,
// home directory and protected roots the caller hands in) always give the same
// [Decision]. It has no clock and no I/O beyond the [FS] it is given; the one
// package-level value is the program table, built once and never changed.
// A denial is a value, never an error.
//
// # Two halves: the engine and the programs
//
// The engine knows the shell and paths; it holds no program names, and
// TestEngineNamesNoProgram (engine_test.go) fails when one of its files
// names one. The knowledge of programs lives in the prog_*.go files, one
// per program or family, each with its table rows, its own checks and a
// comment saying what the program can do that a scope must stop, in its
// manual's words; the shell's own commands are builtins.go's, the
// variables that make programs run others envvars.go's:
//
//	engine                                   programs
//	compile.go  entries.go   scope.yml        programs.go      the table, row constructors
//	decide.go                a call by tool   builtins.go      the shell's own commands
//	shell.go                 parse, walk      envvars.go       assignments
//	words.go    arith.go     expand words     prog_outputs.go  what echo, pwd, git rev-parse print
//	command.go               simple commands  prog_fileutils.go rm cp mv ln dd mkdir …
//	options.go               match options    prog_readers.go  cat ls head sort …
//	recursive.go             recursive reads  prog_search.go   grep rg fd (rgtypes.go)
//	path.go                  check paths      prog_jq.go       jq gojq yq
//	network.go network_sockets.go  network    prog_sed.go prog_awk.go prog_find.go
//	call.go api.go tools.go  calls, tools     prog_archives.go tar zip unzip
//	decision.go widen.go     decisions        prog_interpreters.go python node sh …
//	scope.go env.go lookpath.go denyroots.go  prog_go.go prog_make.go
//	memofs.go osfs_linux.go  the file system  prog_packagemanagers.go npm npx pnpm yarn
//	                                          prog_pip.go prog_cargo.go
//	                                          prog_git.go prog_network.go
//	                                          prog_hosts.go prog_sockets.go
//	                                          prog_editors.go prog_wrappers.go
//
// The engine reaches a program only through its row (a spec: options with
// their effects, what its operands are, subcommands, whether it wraps a
// command) and the row's programCheck, for what a row cannot say.
//
// # The pipeline of a shell call
//
// A shell command line is decided in these steps, each a function named for
// it:
//
//  1. Parse: the line is read by the bash parser (newParser); a line that
//     does not parse is denied.
//  2. Walk: every statement is visited (stmts, stmt, command, forClause,
//     funcDecl, redirect) with a shellState that follows variables,
//     functions and the working directory; nested commands ($(…), <(…)) are
//     walked too.
//  3. Expand words (words): each word becomes its value when it is known
//     before the command runs, or a run-time value whose bounds are kept.
//  4. Simple command (callExpr, simple): a function of this line, a shell
//     builtin (builtin), or a program (external).
//  5. Resolve the program (resolveProgram): its table name, and the path a
//     word with a slash names.
//  6. Match options (parseArgs): the arguments split by the program's row
//     into options with their synonyms and values, operands and
//     subcommands.
//  7. Match entries (denyCheck, allowEntries): shell_commands.deny, then
//     shell_commands.allow.
//  8. Analyze (analyze): checkSubcommands, checkOptions, checkOperands, then
//     programChecks (the wrapped command, the row's programCheck).
//  9. Check paths (operand, checkPath, checkAbs): every file read or written
//     against paths.read, paths.write and paths.deny, symlinks resolved.
//
// Every step adds violations (add); the decision reports the first and
// lists them all.
//
// # How to add a program
//
//  1. Read the program's manual and its GTFOBins page. Write down every
//     option or subcommand that runs another program, runs inline code,
//     loads configuration or code that can do either, names a file read or
//     written, or changes the directory; and what its operands are.
//  2. Create prog_NAME.go (or add to the family's file). Start it with a
//     comment that says those dangers, quoting the manual.
//  3. Write registerNAME(add adder) with the row, and add registerNAME to
//     the list in buildPrograms (programs.go). Build the options with the
//     constructors of programs.go: fl (flag), val and oval (a value), pair
//     (a name and a value), rd and wr (a file read or written), rdPair (a
//     name and a file read), chdir, exe (runs a program), code (inline
//     code), conf (configuration that can run programs), dflag (a dangerous
//     flag), pat and patFile (the pattern or script, or a file holding it),
//     inPlace and inPlaceSuffix; mark with dest and a connKind an option
//     whose value names where the program connects (a proxy, a name
//     server, an address it sends a request to). Give every dangerous one its why, in the
//     words a denial shows the model. Pick the operands mode (opRead,
//     opPatternFirst, opWriteLast, …) and, for a program with subcommands,
//     subs, defSub and subDanger.
//  4. What the row cannot say goes in the row's programCheck
//     (func(c *checker, p *parsed, allowed allowEntries, st *shellState)):
//     read p.has, p.values and p.operands, check files with c.operand,
//     refuse with c.danger (an allow entry that names the option permits
//     it), or with c.unconfined what only the private view of a confined
//     run bounds (refused where the caller runs the command, under check),
//     check what a recursive reader reads with c.recursiveRead.
//  5. Test it in prog_NAME_test.go with runProgCases: every danger denied
//     with its reason, and the everyday commands allowed. Run
//     go test ./policy -run TestProgNAME, then the whole package: the
//     corpora in testdata/corpus must keep passing.
//
// prog_jq.go was written by these steps.
package policy
