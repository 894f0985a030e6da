package exec

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// runFilter runs a seccomp filter on one system call in x/net/bpf's
// virtual machine. The machine loads words in network order, so the
// words the filter reads are written big-endian at their offsets.
func runFilter(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	ins := make([]bpf.Instruction, len(prog))
	for i, f := range prog {
		ins[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}.Disassemble()
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64) // struct seccomp_data
	binary.BigEndian.PutUint32(data[seccompNr:], nr)
	binary.BigEndian.PutUint32(data[seccompArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(data[seccompArg0+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[seccompArg0+8*i+4:], uint32(a>>32))
	}
	out, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(out)
}

func TestSocketFilter(t *testing.T) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill   = unix.SECCOMP_RET_KILL_PROCESS
	)
	type call struct {
		name            string
		arch, nr        uint32
		arg0            uint64
		denied, allowed uint32 // the answer with AF_UNIX refused, and allowed
	}
	x86, i386, a64, arm := uint32(unix.AUDIT_ARCH_X86_64), uint32(unix.AUDIT_ARCH_I386), uint32(unix.AUDIT_ARCH_AARCH64), uint32(unix.AUDIT_ARCH_ARM)
	for goarch, calls := range map[string][]call{
		"amd64": {
			{"socket(AF_UNIX)", x86, 41, unix.AF_UNIX, eperm, allow},
			{"socket(AF_UNIX) high half set", x86, 41, 1<<32 | unix.AF_UNIX, eperm, allow},
			{"socket(AF_INET)", x86, 41, unix.AF_INET, allow, allow},
			{"socket(AF_INET6)", x86, 41, unix.AF_INET6, allow, allow},
			{"socketpair(AF_INET)", x86, 53, unix.AF_INET, allow, allow},
			{"connect", x86, 42, 3, allow, allow},
			{"read", x86, 0, 0, allow, allow},
			{"io_uring_setup", x86, 425, 8, eperm, eperm},
			{"io_uring_enter", x86, 426, 8, eperm, eperm},
			{"io_uring_register", x86, 427, 8, eperm, eperm},
			{"x32 socket", x86, x32SyscallBit | 41, unix.AF_UNIX, enosys, enosys},
			{"x32 read", x86, x32SyscallBit, 0, enosys, enosys},
			{"i386 socket(AF_UNIX)", i386, 359, unix.AF_UNIX, eperm, allow},
			{"i386 socket(AF_INET)", i386, 359, unix.AF_INET, allow, allow},
			{"i386 socketcall(SYS_SOCKET)", i386, 102, socketcallSocket, eperm, allow},
			{"i386 socketcall(SYS_CONNECT)", i386, 102, 3, allow, allow},
			{"i386 socketcall(SYS_SOCKETPAIR)", i386, 102, socketcallSocketpair, eperm, allow},
			{"i386 io_uring_setup", i386, 425, 8, eperm, eperm},
			{"i386 41 is not socket", i386, 41, unix.AF_UNIX, allow, allow},
			{"arm64 on amd64", a64, 198, unix.AF_UNIX, kill, kill},
		},
		"arm64": {
			{"socket(AF_UNIX)", a64, 198, unix.AF_UNIX, eperm, allow},
			{"socket(AF_INET)", a64, 198, unix.AF_INET, allow, allow},
			{"socketpair(AF_INET)", a64, 199, unix.AF_INET, allow, allow},
			{"io_uring_setup", a64, 425, 8, eperm, eperm},
			{"x32 bit is no ABI here", a64, x32SyscallBit | 198, unix.AF_UNIX, allow, allow},
			{"arm socket(AF_UNIX)", arm, 281, unix.AF_UNIX, eperm, allow},
			{"arm socketpair(AF_INET)", arm, 288, unix.AF_INET, allow, allow},
			{"x86-64 on arm64", x86, 41, unix.AF_UNIX, kill, kill},
		},
		"riscv64": {
			{"socket(AF_UNIX)", unix.AUDIT_ARCH_RISCV64, 198, unix.AF_UNIX, eperm, allow},
			{"arm on riscv64", arm, 281, unix.AF_UNIX, kill, kill},
		},
	} {
		for _, denyUnix := range []bool{true, false} {
			prog, err := socketFilter(goarch, denyUnix)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range calls {
				want := c.allowed
				if denyUnix {
					want = c.denied
				}
				if got := runFilter(t, prog, c.arch, c.nr, c.arg0); got != want {
					t.Errorf("%s, AF_UNIX refused %v: %s = %#x, want %#x", goarch, denyUnix, c.name, got, want)
				}
			}
		}
	}
	if _, err := socketFilter("mips", true); err == nil {
		t.Error("a filter for an architecture the table does not know")
	}
}

// TestSocketPairFilter checks socketpair(AF_UNIX, type): a datagram pair
// (SOCK_RAW is one too) sends to any address, so a scope that names no
// unix socket gets stream and seqpacket pairs only.
func TestSocketPairFilter(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	for goarch, abi := range map[string]struct{ arch, nr uint32 }{
		"amd64":   {unix.AUDIT_ARCH_X86_64, 53},
		"arm64":   {unix.AUDIT_ARCH_AARCH64, 199},
		"riscv64": {unix.AUDIT_ARCH_RISCV64, 199},
	} {
		i386 := map[string]struct{ arch, nr uint32 }{"amd64": {unix.AUDIT_ARCH_I386, 360}, "arm64": {unix.AUDIT_ARCH_ARM, 288}}
		for _, denyUnix := range []bool{true, false} {
			prog, err := socketFilter(goarch, denyUnix)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				family, typ uint64
				denied      uint32
			}{
				{unix.AF_UNIX, unix.SOCK_STREAM, allow},
				{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK, allow},
				{unix.AF_UNIX, unix.SOCK_SEQPACKET, allow},
				{unix.AF_UNIX, unix.SOCK_DGRAM, eperm},
				{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, eperm},
				{unix.AF_UNIX, unix.SOCK_RAW, eperm},
				{unix.AF_UNIX, 1<<32 | unix.SOCK_DGRAM, eperm},
				{unix.AF_INET, unix.SOCK_DGRAM, allow},
			} {
				want := c.denied
				if !denyUnix {
					want = allow
				}
				abis := []struct{ arch, nr uint32 }{abi}
				if a, ok := i386[goarch]; ok {
					abis = append(abis, a)
				}
				for _, a := range abis {
					if got := runFilter(t, prog, a.arch, a.nr, c.family, c.typ); got != want {
						t.Errorf("%s arch %#x, AF_UNIX refused %v: socketpair(%d, %#x) = %#x, want %#x", goarch, a.arch, denyUnix, c.family, c.typ, got, want)
					}
				}
			}
		}
	}
}
