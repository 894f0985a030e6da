package exec

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of a confined program (the helper's side). The
// helper installs it on every thread just before the program starts, in
// the private view and under Landlock alone alike; the program and all it
// starts inherit it. It refuses, with EPERM:
//
//   - socket(AF_UNIX, …) when the scope names no unix socket (rules
//     UnixSockets): a program then makes no socket that could reach a
//     host one, under any network mode; and for the same scope
//     socketpair(AF_UNIX, …) of any type but SOCK_STREAM and
//     SOCK_SEQPACKET: a datagram socket of a pair (SOCK_RAW is one too)
//     still sends to any address sendto(2) names, a host socket bound
//     after the view was made among them. A stream or seqpacket pair is
//     connected to itself and names nothing;
//   - io_uring_setup, io_uring_enter and io_uring_register always: the
//     ring's own operations (IORING_OP_SOCKET among them) run past
//     seccomp. Programs fall back to plain system calls;
//   - on x86-64, every x32 system call (numbers with the x32 bit) with
//     ENOSYS: another table of numbers, which the checks below would not
//     see.
//
// The filter checks the architecture of each call: a 32-bit program on a
// 64-bit kernel (i386 on x86-64, arm on arm64) gets the same checks with
// its own numbers; there, socketcall(SYS_SOCKET, …) and
// socketcall(SYS_SOCKETPAIR, …), whose family the filter cannot read, are
// refused whole when AF_UNIX is. A call of any
// other architecture kills the process. Every ABI below is little-endian:
// the low half of an argument is at its offset.

// seccompABI is what the filter needs of one system call ABI.
type seccompABI struct {
	audit uint32 // AUDIT_ARCH_*
	// socket, socketpair and socketcall are the numbers of socket(2),
	// socketpair(2) and socketcall(2) (0: the ABI has none).
	socket, socketpair, socketcall uint32
	// x32 says that numbers with the x32 bit set are another ABI (x86-64).
	x32 bool
}

// Numbers shared by every ABI the filter knows.
const (
	sysIOURingSetup    = 425
	sysIOURingEnter    = 426
	sysIOURingRegister = 427
	// socketcallSocket and socketcallSocketpair are socketcall's first
	// argument for socket(2) and socketpair(2).
	socketcallSocket     = 1
	socketcallSocketpair = 8
	// sockTypeMask keeps the type of socket(2)'s second argument, without
	// SOCK_NONBLOCK and SOCK_CLOEXEC.
	sockTypeMask = 0xf
	// x32SyscallBit marks the x32 ABI's numbers on x86-64.
	x32SyscallBit = 0x40000000
)

// Offsets in struct seccomp_data.
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16 // the low half of args[0]
	seccompArg1 = 24 // the low half of args[1]
)

// seccompABIs returns the ABIs a process of goarch may call the kernel
// with: its own first, then the 32-bit one its kernel may also run.
func seccompABIs(goarch string) ([]seccompABI, error) {
	switch goarch {
	case "amd64":
		return []seccompABI{{audit: unix.AUDIT_ARCH_X86_64, socket: 41, socketpair: 53, x32: true},
			{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, socketcall: 102}}, nil
	case "arm64":
		return []seccompABI{{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, socketpair: 199},
			{audit: unix.AUDIT_ARCH_ARM, socket: 281, socketpair: 288}}, nil
	case "riscv64":
		return []seccompABI{{audit: unix.AUDIT_ARCH_RISCV64, socket: 198, socketpair: 199}}, nil
	}
	return nil, fmt.Errorf("seccomp: no filter for %s", goarch)
}

// socketFilter returns the filter for goarch; denyUnix refuses
// socket(AF_UNIX, …).
func socketFilter(goarch string, denyUnix bool) ([]unix.SockFilter, error) {
	abis, err := seccompABIs(goarch)
	if err != nil {
		return nil, err
	}
	var b bpfBuilder
	b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArch)
	for i, abi := range abis {
		next := fmt.Sprintf("abi%d", i+1)
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, abi.audit, "", next)
		b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompNr)
		if abi.x32 {
			b.jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, x32SyscallBit, "enosys", "")
		}
		for _, nr := range []uint32{sysIOURingSetup, sysIOURingEnter, sysIOURingRegister} {
			b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, "eperm", "")
		}
		if !denyUnix {
			b.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
			b.label(next)
			continue
		}
		if abi.socketcall != 0 {
			b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, abi.socketcall, "", "socket"+next)
			b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArg0)
			b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, socketcallSocket, "eperm", "")
			b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, socketcallSocketpair, "eperm", "allow")
			b.label("socket" + next)
		}
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, abi.socket, "", "pair"+next)
		b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArg0)
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AF_UNIX, "eperm", "allow")
		b.label("pair" + next)
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, abi.socketpair, "", "allow")
		b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArg0)
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AF_UNIX, "", "allow")
		b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArg1)
		b.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, sockTypeMask)
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SOCK_STREAM, "allow", "")
		b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SOCK_SEQPACKET, "allow", "eperm")
		b.label(next)
	}
	b.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_KILL_PROCESS)
	b.label("allow")
	b.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	b.label("eperm")
	b.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	b.label("enosys")
	b.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	return b.assemble()
}

// applySeccomp installs the filter (socketFilter) on every thread of this
// process, with no_new_privs set, as seccomp requires of a process
// without CAP_SYS_ADMIN. no_new_privs is a thread's own until the filter
// is synchronised: the prctl and the seccomp call run on one thread, or
// the call may find the flag unset and fail with EACCES.
func applySeccomp(denyUnix bool) error {
	prog, err := socketFilter(runtime.GOARCH, denyUnix)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	tid, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	switch {
	case e != 0:
		return fmt.Errorf("seccomp: install the filter: %w", e)
	case tid != 0:
		return fmt.Errorf("seccomp: thread %d could not take the filter", tid)
	}
	return nil
}

// bpfBuilder assembles a classic BPF program whose jumps name labels
// ("" is the next instruction). Jumps go forward only, at most 255
// instructions.
type bpfBuilder struct {
	ins    []unix.SockFilter
	jumps  []bpfJump
	labels map[string]int
}

// bpfJump is a jump instruction waiting for its labels.
type bpfJump struct {
	at     int
	jt, jf string
}

func (b *bpfBuilder) stmt(code uint16, k uint32) {
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

func (b *bpfBuilder) jump(code uint16, k uint32, jt, jf string) {
	b.jumps = append(b.jumps, bpfJump{at: len(b.ins), jt: jt, jf: jf})
	b.stmt(code, k)
}

func (b *bpfBuilder) label(name string) {
	if b.labels == nil {
		b.labels = map[string]int{}
	}
	b.labels[name] = len(b.ins)
}

// assemble resolves the jumps.
func (b *bpfBuilder) assemble() ([]unix.SockFilter, error) {
	off := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := b.labels[label]
		if !ok {
			return 0, fmt.Errorf("seccomp: no label %q", label)
		}
		d := to - from - 1
		if d < 0 || d > 255 {
			return 0, errors.New("seccomp: a jump out of reach")
		}
		return uint8(d), nil
	}
	for _, j := range b.jumps {
		var err1, err2 error
		b.ins[j.at].Jt, err1 = off(j.at, j.jt)
		b.ins[j.at].Jf, err2 = off(j.at, j.jf)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
	}
	return b.ins, nil
}
