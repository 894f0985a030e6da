package exec

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The network of a confined program (the helper's side).
//
// Unless the scope says `network: any`, the helper starts in a network
// namespace of its own as well (CLONE_NEWNET with the others), whose only
// interface is a loopback. As root of its user namespace it brings lo up
// and, for a network list, makes the listening sockets of the way out at
// fixed addresses ([nsHTTPProxy], [nsSOCKS], [nsDNS], TCP and UDP): they
// exist before the program starts, so its first connection waits in their
// backlog rather than failing. It passes them to the gateway (sendFDs),
// which serves them with netproxy on the host side, and binds a
// resolv.conf naming 127.0.0.1 over /etc/resolv.conf. With `network: none`
// there are no listeners: loopback alone, no way out.

// resolvConf is what the view's /etc/resolv.conf says: the stub alone,
// one attempt, so that a refused name fails at once.
const resolvConf = "# scopegate: names are answered by the gateway's DNS stub\nnameserver 127.0.0.1\noptions attempts:1 timeout:5\n"

// setupNetwork brings lo up in the helper's new network namespace and,
// for a proxy view, makes the listeners and returns their descriptors
// (close-on-exec), in the order of the protocol (nsListeners, then the
// forwarded ports).
func setupNetwork(mode NetworkMode, forward []int) ([]int, error) {
	if err := loopbackUp(); err != nil {
		return nil, err
	}
	if mode != NetworkProxy {
		return nil, nil
	}
	var fds []int
	fail := func(err error) ([]int, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, err
	}
	for _, l := range nsListeners() {
		fd, err := listenLoopback(l.typ, l.port)
		if err != nil {
			return fail(err)
		}
		fds = append(fds, fd)
	}
	for _, port := range forward {
		fd, err := listenLoopback(unix.SOCK_STREAM, port)
		if err != nil {
			return fail(err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// loopbackUp sets the IFF_UP flag of lo.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// listenLoopback makes a socket of typ bound to 127.0.0.1:port, listening
// when it is a stream socket.
func listenLoopback(typ, port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
	}
	if typ == unix.SOCK_STREAM {
		if err := unix.Listen(fd, 128); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
		}
	}
	return fd, nil
}

// bindResolvConf writes [resolvConf] in the private /tmp and binds it
// read-only over /etc/resolv.conf (the link's target when it is one). A
// host without /etc/resolv.conf is left as it is: its programs find no
// name server but the stub's address is still theirs to ask.
func bindResolvConf() error {
	if _, err := os.Stat("/etc/resolv.conf"); err != nil {
		return nil
	}
	src := privateTmp + "/.scopegate-resolv.conf"
	if err := os.WriteFile(src, []byte(resolvConf), 0o444); err != nil {
		return fmt.Errorf("write resolv.conf: %w", err)
	}
	if err := unix.Mount(src, "/etc/resolv.conf", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind resolv.conf: %w", err)
	}
	if err := unix.Mount("", "/etc/resolv.conf", "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("bind resolv.conf read-only: %w", err)
	}
	return nil
}

// joinNetwork sets up the program's network namespace, in the helper:
// loopback up and, for a proxy view, the listeners passed to the gateway
// on netFD and the resolv.conf naming the stub.
func joinNetwork(mode NetworkMode, forward []int) error {
	fds, err := setupNetwork(mode, forward)
	if err != nil {
		return err
	}
	if mode != NetworkProxy {
		return nil
	}
	err = sendFDs(netFD, listenersByte, fds)
	for _, fd := range fds {
		unix.Close(fd)
	}
	if err != nil {
		return err
	}
	return bindResolvConf()
}
