package store

import (
	"os"
	"os/exec"
	"testing"
)

func TestProcessGone(t *testing.T) {
	me := ThisProcess()
	if me.PID != os.Getpid() || me.Host == "" {
		t.Fatalf("ThisProcess = %+v", me)
	}
	if me.Gone() {
		t.Error("this process is gone")
	}
	// A child that has exited and been reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := Process{Host: me.Host, PID: cmd.Process.Pid, Boot: me.Boot}
	if !dead.Gone() {
		t.Errorf("exited child %d is not gone", dead.PID)
	}
	// The pid of a living process, but another start time: the pid was reused.
	reused := me
	if me.Start != "" {
		reused.Start = "1"
		if !reused.Gone() {
			t.Error("a reused pid is taken for the writer")
		}
	}
	// Another boot of this machine: gone, whatever the pid.
	if me.Boot != "" {
		rebooted := me
		rebooted.Boot = "00000000-0000-0000-0000-000000000000"
		if !rebooted.Gone() {
			t.Error("a process of an earlier boot is not gone")
		}
	}
	// Another machine, or nothing known: never declared gone.
	for _, p := range []Process{{Host: me.Host + "-elsewhere", PID: dead.PID}, {Host: me.Host}, {}} {
		if p.Gone() {
			t.Errorf("%+v declared gone", p)
		}
	}
	// Stored and read back.
	if p := ParseProcess("", me.PID, me.String()); p != me {
		t.Errorf("round trip: %+v, want %+v", p, me)
	}
}
