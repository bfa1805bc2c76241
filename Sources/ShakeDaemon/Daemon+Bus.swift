import Logging
import ShakeConfig
import ShakeServer
import SystemdSupport

/// The shake object on the system bus (`docs/dbus.md`): the bus name, path and interface, and the glue between
/// the object's handlers and the daemon's state.
extension Daemon {
    /// The well-known name, the object path and the interface. The project has no domain of its own, so the
    /// names follow freedesktop's rule for that case, a reversed code-hosting name; `1` is the interface's
    /// version (a change that breaks clients gets `Shake2`, beside this one).
    public static let busName = "io.github.shaked.Shake1"
    public static let busPath = "/io/github/shaked/Shake1"
    public static let busInterface = "io.github.shaked.Shake1"

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set) and offers the object, as `dbus.mode`
    /// says. With `auto`, a bus that cannot be had is a log line; with `on`, it stops the daemon.
    /// - Returns: the object, or nil without one; `failed` when `dbus.mode: on` could not be honoured.
    func startBus() -> (bus: BusObject?, failed: Bool) {
        let mode = started.dbus.mode
        guard mode != .off else { return (nil, false) }
        do {
            let bus = try BusObject(
                address: nil, name: Self.busName, path: Self.busPath, interface: Self.busInterface,
                handlers: busHandlers(), logger: logger)
            logger.info("offering the shake object on the system bus", metadata: ["bus_name": "\(Self.busName)"])
            return (bus, false)
        } catch {
            if mode == .on {
                logger.critical("cannot offer the shake object on the system bus", metadata: ["error": "\(error)"])
                return (nil, true)
            }
            logger.notice("no D-Bus service: the system bus cannot be had", metadata: ["error": "\(error)"])
            return (nil, false)
        }
    }

    private func busHandlers() -> BusObject.Handlers {
        BusObject.Handlers(
            bool: { [self] name in shared.withLock { $0.busProperties }.bool(name) },
            string: { [self] name in shared.withLock { $0.busProperties }.string(name) },
            call: { [self] method, caller in busCall(method, caller) },
            nameGone: { [self] name in
                let (action, held) = shared.withLock { state in
                    let held = state.busClaimants.removeValue(forKey: name) != nil
                    return (state.gate.released(by: name), held)
                }
                if held {
                    logger.info("a D-Bus client left the bus: its claim is released", metadata: ["client": "\(name)"])
                }
                perform(action)
            })
    }

    /// `Claim` and `Release`, allowed to whoever may subscribe on the socket (`access.subscribe`), decided from
    /// the credentials the bus vouches for.
    private func busCall(_ method: String, _ caller: BusObject.Caller) -> Bool {
        let peer = PeerCredentials(pid: 0, uid: caller.uid, gid: caller.gid, supplementaryGroups: Set(caller.groups))
        let metadata: Logger.Metadata = [
            "method": "\(method)", "client": "\(caller.name)", "client_uid": "\(caller.uid)",
            "client_gid": "\(caller.gid)",
        ]
        let (allowed, action): (Bool, CaptureGate.Action?) = shared.withLock { state in
            guard state.access.subscribe.allows(peer) else { return (false, nil) }
            switch method {
            case "Claim":
                state.busClaimants[caller.name] = peer
                return (true, state.gate.claimed(by: caller.name, user: caller.uid))
            case "Release":
                state.busClaimants[caller.name] = nil
                return (true, state.gate.released(by: caller.name))
            default:
                return (false, nil)
            }
        }
        if allowed {
            logger.info("a D-Bus client called a method", metadata: metadata)
        } else {
            logger.notice("a D-Bus call was refused by the access rules", metadata: metadata)
        }
        perform(action)
        return allowed
    }

    /// Sends `PropertiesChanged` for whatever changed since the last notice.
    func announceBusProperties() {
        guard let bus = self.bus else { return }
        let changed = shared.withLock { state in
            let current = state.busProperties
            defer { state.announced = current }
            return current.changes(from: state.announced)
        }
        bus.propertiesChanged(changed)
    }

    /// A reload narrowed `access.subscribe`: the claims of clients it no longer allows are dropped.
    func revokeBusClaims() {
        let (revoked, action): ([String], CaptureGate.Action?) = shared.withLock { state in
            let revoked = state.busClaimants.filter { !state.access.subscribe.allows($0.value) }.map(\.key)
            var action: CaptureGate.Action?
            for name in revoked {
                state.busClaimants[name] = nil
                action = state.gate.released(by: name) ?? action
            }
            return (revoked, action)
        }
        for name in revoked {
            logger.notice("the access rules no longer allow a D-Bus client's claim", metadata: ["client": "\(name)"])
        }
        perform(action)
    }
}

// MARK: - Capture that follows the session

extension Daemon {
    /// Follows logind's sessions when `sensor.follow_session` is on and capture depends on listeners at all; a
    /// system bus that cannot be had is a log line, and every listener then counts.
    func startSessionWatcher() -> SessionWatcher? {
        let (follow, dependsOnListeners) = shared.withLock { state in
            (state.gate.followSession, state.gate.hasSocket && !state.gate.printEvents)
        }
        guard follow, dependsOnListeners else { return nil }
        do {
            return try SessionWatcher(logger: logger) { [self] present in
                logger.info(
                    "sessions changed",
                    metadata: [
                        "present_users":
                            "\(present.map { $0.sorted().map(String.init).joined(separator: ",") } ?? "unknown")"
                    ])
                perform(shared.withLock { $0.gate.sessionsChanged(presentUsers: present) })
            }
        } catch {
            logger.notice(
                "capture does not follow sessions: the system bus cannot be had", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
