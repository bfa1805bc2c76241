#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make vm-test: the daemon on Debian's own kernel with real IIO drivers, in a QEMU virtual machine.
#
# Downloads Debian's kernel package (the one linux-image-amd64 depends on), builds a busybox initramfs with the
# driver modules, the project's binaries and the feeders (scripts/vm/*.c), boots it (KVM when it really works,
# otherwise TCG), runs the scenarios in scripts/vm/guest-init.sh and checks their events with scripts/vm/check.py
# against `shakectl detect` on the host. docs/vm-tests.md describes it.
#
# Environment: VM_SCENARIOS=a,b (default all), VM_CACHE (default .build-vm), VM_BIN (the folder with shaked and
# shakectl; default .build/debug), VM_TIMEOUT (seconds for the whole boot, default 900), VM_REQUIRED=1 (fail
# instead of skipping when the machine cannot run it), VM_KEEP_LOG (copy the serial log there), VM_DEB (the package
# for the package scenario), VM_PACKAGE_BREAK (break what the package scenario checks: scripts/vm/package-test.sh).
# VM_RETRY=0: a failed scenario fails at once (by default it is booted once more, below).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VM_CACHE:-$root/.build-vm}
bin=${VM_BIN:-$root/.build/debug}
scenarios=${VM_SCENARIOS:-all}
timeout_s=${VM_TIMEOUT:-900}
busybox_scenarios="shake-horizontal,shake-vertical,shake-both,shakes3,fling,walking,vanish,no-sensor,irregular,clock-step,clock-mapped,kxcjk,key"
# Scenarios with a part on the host (scripts/vm/host-agent.py): a suspend to RAM woken by QEMU's monitor, and
# the daemon on the host reading the guest's sensor through iiod.
host_scenarios="suspend,suspend-polled,iiod,iiod-vanish,iiod-link"
busybox_scenarios="$busybox_scenarios,$host_scenarios"
all_scenarios="$busybox_scenarios,systemd,systemd-suspend,relay"
# The package scenario installs the Debian package make deb built (VM_DEB, default .build-deb/out): part of "all"
# only where there is one.
deb=${VM_DEB:-$(ls "$root"/.build-deb/out/shaked_*.deb 2>/dev/null | head -1 || true)}
[ -n "$deb" ] && [ -f "$deb" ] && all_scenarios="$all_scenarios,package"

skip() {
  if [ "${VM_REQUIRED:-0}" = 1 ]; then
    echo "vm: cannot run: $*" >&2
    exit 1
  fi
  echo "vm: skipped: $*"
  exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root (apt-get for the kernel package and QEMU)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "needs Debian's apt-get and dpkg-deb"
for tool in "$bin/shaked" "$bin/shakectl"; do
  [ -x "$tool" ] || { echo "vm: $tool is missing: build first (swift build)" >&2; exit 1; }
done

# Host tools, from the distribution.
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed" || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
command -v depmod >/dev/null || need+=(kmod)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
[[ ,$scenarios, =~ ,(systemd|systemd-suspend|relay|package), || $scenarios == all ]] &&
  ! command -v mmdebstrap >/dev/null && need+=(mmdebstrap)
if [ ${#need[@]} -gt 0 ]; then
  echo "vm: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }; } \
    || skip "cannot install ${need[*]} from the distribution's archive"
fi

mkdir -p "$cache"
started=$(date +%s)

# Debian's kernel: the version linux-image-amd64 points at, unpacked once, with modules.dep made by depmod.
package=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
if [ -z "$package" ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  package=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
fi
[ -n "$package" ] || skip "the distribution's archive does not list linux-image-amd64"
kernel_dir=$cache/kernel/$package
if [ ! -f "$kernel_dir/.ready" ]; then
  echo "vm: downloading $package"
  rm -rf "$kernel_dir" && mkdir -p "$kernel_dir"
  (cd "$kernel_dir" && apt-get download -q "$package" >/dev/null 2>&1) || skip "cannot download $package"
  dpkg-deb -x "$kernel_dir"/*.deb "$kernel_dir/root"
  rm -f "$kernel_dir"/*.deb
  release=$(ls "$kernel_dir/root/lib/modules")
  depmod -b "$kernel_dir/root" "$release"
  touch "$kernel_dir/.ready"
fi
release=$(ls "$kernel_dir/root/lib/modules")
vmlinuz=$kernel_dir/root/boot/vmlinuz-$release

# The feeders and helpers, static so that they need nothing in the guest.
# Rebuilt whenever the source differs from the one built (a copy is kept): a cache shared by checkouts of
# different versions must not keep another checkout's feeder because its binary is newer than this source.
mkdir -p "$cache/bin" "$cache/bin-source"
for program in uhid-accel i2c-accel monotonic evdev-read stamp-lines; do
  source=$root/scripts/vm/$program.c
  if [ ! -x "$cache/bin/$program" ] || ! cmp -s "$source" "$cache/bin-source/$program.c"; then
    gcc -O2 -Wall -Wextra -Werror -static -o "$cache/bin/$program" "$source" -lm
    cp "$source" "$cache/bin-source/$program.c"
  fi
done

# Traces: the committed fixtures, and three shakes in a row made by shakectl synth.
traces=$cache/traces
rm -rf "$traces" && mkdir -p "$traces"
cp "$root"/Tests/Fixtures/*.csv "$traces/"
"$bin/shakectl" synth --repeat 3 --pause 2 --duration 1.2 --before 1.5 --after 1.5 --seed 7 --out "$traces/shakes3.csv"
# The iiod-link scenario's: three shakes 16 s apart, room for the link to fail and return between them.
"$bin/shakectl" synth --repeat 3 --pause 16 --duration 1.2 --before 1.5 --after 1.5 --seed 7 --out "$traces/link.csv"
# The relay scenario's: the device turned through its four orientations, then the three shakes.
python3 "$root/scripts/vm/orientation-trace.py" "$traces/shakes3.csv" >"$traces/relay.csv"

# The initramfs: busybox, the driver modules and what they depend on, the binaries and the libraries ldd lists.
stage=$cache/initramfs
rm -rf "$stage" && mkdir -p "$stage"/{bin,sbin,usr/bin,etc,proc,sys,dev,tmp,run,traces}
cp /bin/busybox "$stage/bin/busybox"
for applet in $("$stage/bin/busybox" --list); do
  [ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
cp "$cache"/bin/* "$stage/bin/"
cp "$root/scripts/vm/guest-init.sh" "$stage/init"
chmod +x "$stage/init"
echo "$busybox_scenarios" >"$stage/etc/vm-scenarios"
cp "$traces"/*.csv "$stage/traces/"
modules=(uhid hid-sensor-hub hid-sensor-accel-3d i2c-stub i2c-dev kxcjk-1013 uinput evdev virtio_pci virtio_net)
moddir=$kernel_dir/root/lib/modules/$release
mkdir -p "$stage/lib/modules/$release"
cp "$moddir"/modules.{dep,alias,symbols,builtin,order} "$stage/lib/modules/$release/" 2>/dev/null || true
for module in "${modules[@]}"; do
  modprobe -d "$kernel_dir/root" -S "$release" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r path; do
  relative=${path#"$kernel_dir/root"}
  mkdir -p "$stage$(dirname "$relative")"
  cp "$path" "$stage$relative"
done
for program in shaked shakectl; do
  strip -o "$stage/usr/bin/$program" "$bin/$program"
done
ldd "$bin/shaked" "$bin/shakectl" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | sort -u | while read -r lib; do
  mkdir -p "$stage$(dirname "$lib")"
  cp -L "$lib" "$stage$lib"
done
# Both /lib and /lib64 names for the dynamic loader, as on the host.
[ -e "$stage/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$stage/lib64" && cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/"; }
# Debian's iiod (libiio 0.24) for the iiod scenarios, unpacked from its package with the libraries it links.
if [[ ,$scenarios, == *,iiod* || $scenarios == all ]]; then
  iiod_dir=$cache/iiod
  if [ ! -x "$iiod_dir/root/usr/sbin/iiod" ]; then
    rm -rf "$iiod_dir" && mkdir -p "$iiod_dir"
    (cd "$iiod_dir" && apt-get download -q iiod libaio1 >/dev/null 2>&1) || skip "cannot download iiod"
    for package in "$iiod_dir"/*.deb; do dpkg-deb -x "$package" "$iiod_dir/root"; done
    rm -f "$iiod_dir"/*.deb
  fi
  cp "$iiod_dir/root/usr/sbin/iiod" "$stage/bin/"
  LD_LIBRARY_PATH=$iiod_dir/root/lib/x86_64-linux-gnu ldd "$iiod_dir/root/usr/sbin/iiod" \
    | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
    [ -e "$stage$lib" ] && continue
    mkdir -p "$stage$(dirname "$lib")"
    cp -L "$lib" "$stage$lib"
  done
  mkdir -p "$stage/usr/sbin" && ln -sf /bin/iiod "$stage/usr/sbin/iiod"
fi
initrd=$cache/initrd.cpio
(cd "$stage" && find . | cpio -o -H newc --quiet >"$initrd")
prepared=$(date +%s)
echo "vm: kernel $release, initramfs $(($(stat -c %s "$initrd") / 1048576)) MiB, prepared in $((prepared - started)) s"

# KVM only where the CPU has it and a stock kernel really boots; otherwise software emulation.
accel=(-accel tcg -cpu max)
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && [ "${VM_KVM:-auto}" != no ]; then
  probe=$cache/kvm-probe.log
  rm -f "$probe"
  timeout 120 qemu-system-x86_64 -accel kvm -cpu host -m 1536 -kernel "$vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 quiet shaked.scenarios=probe" -nographic -no-reboot -monitor none \
    -serial "file:$probe" >/dev/null 2>&1 </dev/null || true
  grep -q "^@@ done" "$probe" 2>/dev/null && accel=(-accel kvm -cpu host)
fi
[ "$scenarios" = all ] && scenarios=$all_scenarios
# The busybox guest runs every scenario but "systemd", which boots an image of its own.
guest_scenarios=$(tr , '\n' <<<"$scenarios" | grep -vx -e systemd -e systemd-suspend -e relay -e package | paste -sd, -) || true
log=$cache/serial.log
: >"$log"

qemu_extra=()  # more QEMU options for the next boot (default: no monitor)
# Boots an initramfs; appends the serial console to $log. $1: initramfs, $2: memory (MiB), $3: command line.
boot() {
  local serial=$cache/serial-part.log status extra=("${qemu_extra[@]}")
  [ ${#extra[@]} -gt 0 ] || extra=(-monitor none)
  set +e
  timeout "$timeout_s" qemu-system-x86_64 "${accel[@]}" -smp 2 -m "$2" -kernel "$vmlinuz" -initrd "$1" \
    -append "console=ttyS0 panic=-1 quiet loglevel=3 $3" \
    -nographic -no-reboot "${extra[@]}" -serial "file:$serial" </dev/null >/dev/null 2>&1
  status=$?
  set -e
  cat "$serial" >>"$log"
  if [ $status -eq 124 ]; then
    echo "vm: the guest did not power off within $timeout_s s; its serial log:" >&2
    cat "$serial" >&2
    if [ -s "$cache/host/report.log" ]; then
      echo "vm: what the host agent saw and did:" >&2
      cat "$cache/host/report.log" >&2
    fi
    exit 1
  fi
}

if [ -n "$guest_scenarios" ]; then
  echo "vm: booting (${accel[*]}), scenarios: $guest_scenarios"
  qemu_extra=()
  agent=
  if [[ ,$guest_scenarios, =~ ,(${host_scenarios//,/|}), ]]; then
    # The host's side (scripts/vm/host-agent.py): QEMU's monitor on a socket (S3 suspend, system_wakeup) and a
    # port of the host's loopback forwarded to the guest's iiod; restrict=on keeps the guest off every network.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    rm -rf "$cache/host" && mkdir -p "$cache/host"
    printf 'sensor:\n  relay: off\ndbus:\n  mode: off\n' >"$cache/host/shaked.yaml"
    qemu_extra=(-monitor "unix:$cache/host/monitor.sock,server=on,wait=off" -global PIIX4_PM.disable_s3=0
      -netdev "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:30431" -device virtio-net-pci,netdev=net0)
    : >"$cache/serial-part.log"
    python3 "$root/scripts/vm/host-agent.py" --serial "$cache/serial-part.log" --monitor "$cache/host/monitor.sock" \
      --out "$cache/host/report.log" --stop "$cache/host/stop" --work "$cache/host" --shaked "$bin/shaked" \
      --config "$cache/host/shaked.yaml" --port "$port" &
    agent=$!
  fi
  boot "$initrd" 1536 "shaked.scenarios=$guest_scenarios"
  if [ -n "$agent" ]; then
    touch "$cache/host/stop"
    wait "$agent" || true
    cat "$cache/host/report.log" >>"$log" 2>/dev/null || true
  fi
  qemu_extra=()
fi

# The minimal Debian image of the systemd, relay and package scenarios.
# (named for its packages: a cache made without iio-sensor-proxy is not reused)
rootfs=$cache/systemd-rootfs-isp.tar
if [[ ,$scenarios, =~ ,(systemd|systemd-suspend|relay|package), ]] && [ ! -s "$rootfs" ]; then
  echo "vm: building the systemd image (mmdebstrap)"
  mmdebstrap --quiet --format=tar --variant=minbase --include=systemd,systemd-sysv,udev,kmod,libiio0,dbus,iio-sensor-proxy \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' bookworm "$rootfs.part" >/dev/null \
    || skip "mmdebstrap cannot build the systemd image from the distribution's archive"
  mv "$rootfs.part" "$rootfs"
fi

if [[ ,$scenarios, =~ ,(systemd|systemd-suspend|relay), ]]; then
  # A minimal Debian with systemd as PID 1 and udev, the project installed by scripts/install.sh (DESTDIR).
  sysroot=$cache/systemd-root
  rm -rf "$sysroot" && mkdir -p "$sysroot"
  tar -xf "$rootfs" -C "$sysroot"
  mkdir -p "$sysroot/lib/modules/$release"
  cp -a "$stage/lib/modules/$release/." "$sysroot/lib/modules/$release/"
  cp "$moddir/modules.builtin.modinfo" "$sysroot/lib/modules/$release/" 2>/dev/null || true
  depmod -b "$sysroot" "$release"  # kmod's modprobe reads the binary indexes
  # Man pages are not what this tests: a stand-in for swift-argument-parser's generate-manual.
  printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in --section) s=$2; shift;; --output-directory) d=$2; shift;; --*) shift;; *) b=$(basename "$1");; esac; shift; done\n: >"$d/$b.$s"\n' \
    >"$cache/bin/no-manual"
  chmod +x "$cache/bin/no-manual"
  PREFIX=/usr/local SYSCONFDIR=/etc DESTDIR=$sysroot BINDIR_BUILD=$bin GENERATED_DIR=$cache/generated \
    GENERATE_MANUAL=$cache/bin/no-manual "$root/scripts/install.sh" install >/dev/null
  strip "$sysroot/usr/local/sbin/shaked" "$sysroot/usr/local/bin/shakectl"
  ldd "$bin/shaked" "$bin/shakectl" | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
    [ -e "$sysroot$lib" ] || { mkdir -p "$sysroot$(dirname "$lib")" && cp -L "$lib" "$sysroot$lib"; }
  done
  mkdir -p "$sysroot/usr/local/lib/shaked-vm/traces" "$sysroot/etc/systemd/system/multi-user.target.wants" \
    "$sysroot/etc/systemd/system/sockets.target.wants"
  cp "$cache/bin/uhid-accel" "$cache/bin/monotonic" "$root/scripts/vm/systemd-test.sh" "$root/scripts/vm/systemd-suspend-test.sh" \
    "$root/scripts/vm/relay-test.sh" \
    "$sysroot/usr/local/lib/shaked-vm/"
  cp "$traces/shakes3.csv" "$traces/relay.csv" "$sysroot/usr/local/lib/shaked-vm/traces/"
  # iio-sensor-proxy (bookworm's 3.0) ships a D-Bus policy for the user geoclue; without that user dbus.service
  # never finishes starting. The "systemd" scenario runs without it and without the relay; relay-test.sh
  # undoes both.
  grep -q '^geoclue:' "$sysroot/etc/passwd" || {
    echo 'geoclue:x:991:991:geoclue:/var/lib/geoclue:/usr/sbin/nologin' >>"$sysroot/etc/passwd"
    echo 'geoclue:x:991:' >>"$sysroot/etc/group"
    echo 'geoclue:!*:19000::::::' >>"$sysroot/etc/shadow"
  }
  ln -sf /dev/null "$sysroot/etc/systemd/system/iio-sensor-proxy.service"
  mkdir -p "$sysroot/etc/shaked/shaked.yaml.d"
  printf 'sensor:\n  relay: off\n' >"$sysroot/etc/shaked/shaked.yaml.d/vm-systemd.yaml"
  cat >"$sysroot/etc/systemd/system/shaked-vmtest.service" <<'UNIT'
[Unit]
Description=shaked VM test
After=multi-user.target shaked.socket systemd-udevd.service
[Service]
Type=oneshot
ExecStart=/usr/local/lib/shaked-vm/systemd-test.sh
[Install]
WantedBy=multi-user.target
UNIT
  ln -sf ../shaked-vmtest.service "$sysroot/etc/systemd/system/multi-user.target.wants/"
  ln -sf /usr/local/lib/systemd/system/shaked.socket "$sysroot/etc/systemd/system/sockets.target.wants/"
  for unit in serial-getty@ttyS0.service getty@tty1.service; do ln -sf /dev/null "$sysroot/etc/systemd/system/$unit"; done
  ln -sf /lib/systemd/systemd "$sysroot/init"
  echo shaked-vm >"$sysroot/etc/hostname"
  (cd "$sysroot" && find . | cpio -o -H newc --quiet >"$cache/systemd.cpio")
  echo "vm: booting the systemd image ($(($(stat -c %s "$cache/systemd.cpio") / 1048576)) MiB)"
  # systemd-suspend: S3 and QEMU's monitor for the host's agent, which wakes the guest (as the suspend scenario).
  qemu_extra=() agent= suspend_arg=
  if [[ ,$scenarios, == *,systemd-suspend,* ]]; then
    rm -rf "$cache/host" && mkdir -p "$cache/host"
    qemu_extra=(-monitor "unix:$cache/host/monitor.sock,server=on,wait=off" -global PIIX4_PM.disable_s3=0)
    : >"$cache/serial-part.log"
    python3 "$root/scripts/vm/host-agent.py" --serial "$cache/serial-part.log" --monitor "$cache/host/monitor.sock" \
      --out "$cache/host/report.log" --stop "$cache/host/stop" --work "$cache/host" --shaked "$bin/shaked" \
      --config /dev/null --port 0 &
    agent=$! suspend_arg=" shaked.suspend=1"
  fi
  # no_timer_check: as for the package image below, a loaded host can fail the IO-APIC timer check.
  boot "$cache/systemd.cpio" 3072 "systemd.show_status=0 no_timer_check$suspend_arg"
  if [ -n "$agent" ]; then
    touch "$cache/host/stop"
    wait "$agent" || true
    cat "$cache/host/report.log" >>"$log" 2>/dev/null || true
  fi
  qemu_extra=()
fi

if [[ ,$scenarios, == *,package,* ]]; then
  # The same minimal Debian, without the project, with what a user's session brings: pam_systemd (logind
  # sessions), python3-dbus and python3-gi (the D-Bus example), sway and wev (a Wayland session and a client that
  # prints its keys). package-test.sh installs make deb's package with dpkg while iio-sensor-proxy serves the
  # sensor, upgrades it, and purges it.
  [ -n "$deb" ] && [ -f "$deb" ] || { echo "vm: no package for the package scenario: make deb first (or VM_DEB)" >&2; exit 1; }
  pkg_rootfs=$cache/package-rootfs-wl.tar
  if [ ! -s "$pkg_rootfs" ]; then
    echo "vm: building the package scenario's image (mmdebstrap)"
    mmdebstrap --quiet --format=tar --variant=minbase \
      --include=systemd,systemd-sysv,udev,kmod,libiio0,dbus,iio-sensor-proxy,libpam-systemd,python3-dbus,python3-gi,sway,wev \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' bookworm "$pkg_rootfs.part" >/dev/null \
      || skip "mmdebstrap cannot build the package scenario's image from the distribution's archive"
    mv "$pkg_rootfs.part" "$pkg_rootfs"
  fi
  pkgroot=$cache/package-root
  rm -rf "$pkgroot" && mkdir -p "$pkgroot"
  # Not the 160 MB of LLVM, Mesa's drivers and z3 that wlroots' EGL brings along: sway renders with pixman here.
  tar -xf "$pkg_rootfs" -C "$pkgroot" --exclude='./usr/lib/x86_64-linux-gnu/libLLVM*' \
    --exclude='./usr/lib/x86_64-linux-gnu/libz3*' --exclude='./usr/lib/x86_64-linux-gnu/dri'
  mkdir -p "$pkgroot/lib/modules/$release"
  cp -a "$stage/lib/modules/$release/." "$pkgroot/lib/modules/$release/"
  cp "$moddir/modules.builtin.modinfo" "$pkgroot/lib/modules/$release/" 2>/dev/null || true
  depmod -b "$pkgroot" "$release"
  mkdir -p "$pkgroot/usr/local/lib/shaked-vm/traces" "$pkgroot/etc/systemd/system/multi-user.target.wants"
  cp "$cache/bin/uhid-accel" "$root/scripts/vm/package-test.sh" "$pkgroot/usr/local/lib/shaked-vm/"
  cp "$traces/relay.csv" "$traces/shakes3.csv" "$pkgroot/usr/local/lib/shaked-vm/traces/"
  # At rest, display up (normal: -1 g on y), for iio-sensor-proxy before the installation.
  awk 'BEGIN { print "time,x,y,z"; for (i = 0; i < 200; i++) printf "%.2f,0,-9.80665,0\n", i / 100 }' \
    >"$pkgroot/usr/local/lib/shaked-vm/traces/rest.csv"
  cp "$deb" "$pkgroot/root/shaked.deb"
  # The upgrade: a newer build of the same package, its version raised (VERSION+vmupgrade1), repacked as is.
  rm -rf "$cache/repack"
  dpkg-deb -R "$deb" "$cache/repack"
  sed -i "s/^Version: .*/Version: $(dpkg-deb -f "$deb" Version)+vmupgrade1/" "$cache/repack/DEBIAN/control"
  dpkg-deb -Zgzip -z1 -b "$cache/repack" "$pkgroot/root/shaked-new.deb" >/dev/null  # gzip: xz took 10 min on a busy host
  rm -rf "$cache/repack"
  # The image was made without documentation (dpkg's path-exclude): the package's own examples are checked.
  rm -f "$pkgroot/etc/dpkg/dpkg.cfg.d/99mmdebstrap"
  grep -q '^geoclue:' "$pkgroot/etc/passwd" || {
    echo 'geoclue:x:991:991:geoclue:/var/lib/geoclue:/usr/sbin/nologin' >>"$pkgroot/etc/passwd"
    echo 'geoclue:x:991:' >>"$pkgroot/etc/group"
    echo 'geoclue:!*:19000::::::' >>"$pkgroot/etc/shadow"
  }
  cat >"$pkgroot/etc/systemd/system/shaked-vmtest.service" <<'UNIT'
[Unit]
Description=shaked VM test: the package
After=multi-user.target systemd-udevd.service dbus.service
[Service]
Type=oneshot
ExecStart=/usr/local/lib/shaked-vm/package-test.sh
[Install]
WantedBy=multi-user.target
UNIT
  ln -sf ../shaked-vmtest.service "$pkgroot/etc/systemd/system/multi-user.target.wants/"
  for unit in serial-getty@ttyS0.service getty@tty1.service; do ln -sf /dev/null "$pkgroot/etc/systemd/system/$unit"; done
  ln -sf /lib/systemd/systemd "$pkgroot/init"
  echo shaked-vm >"$pkgroot/etc/hostname"
  (cd "$pkgroot" && find . | cpio -o -H newc --quiet >"$cache/package.cpio")
  echo "vm: booting the package image with $(basename "$deb") ($(($(stat -c %s "$cache/package.cpio") / 1048576)) MiB)"
  # no_timer_check: under a loaded host, TCG can fail the kernel's IO-APIC timer check ("IO-APIC + timer doesn't work!").
  boot "$cache/package.cpio" 3072 "systemd.show_status=0 no_timer_check${VM_PACKAGE_BREAK:+ shaked.break=$VM_PACKAGE_BREAK}"
fi
booted=$(date +%s)
[ -n "${VM_KEEP_LOG:-}" ] && cp "$log" "$VM_KEEP_LOG"
echo "vm: guests ran for $((booted - prepared)) s"
rm -rf "$cache/delivered" && mkdir -p "$cache/delivered"
failed=$cache/failed
rm -f "$failed"
status=0
python3 "$root/scripts/vm/check.py" --log "$log" --traces "$traces" --shakectl "$bin/shakectl" --scenarios "$scenarios" \
  --delivered "$cache/delivered" --wall "$((booted - started))" --failed "$failed" || status=$?
again=$(cat "$failed" 2>/dev/null || true)
# A scenario that fails is booted once more, alone with the others of its image (TCG's timing on a busy host can
# stall a guest past a scenario's bounds: docs/vm-tests.md). It fails the run only when it fails again; both
# reports are printed, and the last line says which scenarios needed the second boot. Not when more than two
# failed (that is no stall) or the run is itself the second (VM_RETRY=0).
if [ $status -ne 0 ] && [ -n "$again" ] && [ "${VM_RETRY:-1}" = 1 ] && [ "$(tr , '\n' <<<"$again" | wc -l)" -le 2 ]; then
  echo "vm: booting again for $again, which failed above"
  if VM_RETRY=0 VM_SCENARIOS=$again VM_KEEP_LOG= "$0"; then
    echo "vm: $again failed on the first boot and passed on the second (the first report above)"
    exit 0
  fi
  echo "vm: $again failed twice"
  exit 1
fi
exit $status
