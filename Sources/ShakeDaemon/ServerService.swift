// SPDX-License-Identifier: Apache-2.0
import Logging
import ServiceLifecycle
import ShakeServer

#if canImport(Glibc)
    import Glibc
#endif

/// The socket server: already listening when the group starts (a socket that cannot be had stops the daemon
/// before anything runs); closed last, after what the source ended with was published.
struct ServerService: Service {
    let server: ShakeServer

    /// Makes the server and listens, with room for the most clients the configuration allows.
    /// - Returns: the server, or nil (said in the log) when the socket cannot be had.
    static func start(
        _ listener: ShakeServer.Listener, configuration: ServerConfiguration, hooks: ShakeServer.Hooks,
        logger: Logger
    ) async -> ShakeServer? {
        raiseDescriptorLimit(for: configuration.maxClients, logger: logger)
        let server = ShakeServer(configuration: configuration, hooks: hooks, logger: logger)
        do {
            try await server.start(listener)
            return server
        } catch {
            logger.critical("cannot listen", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Raises the soft limit on open descriptors so that the most clients allowed fit (a service starts with
    /// 1,024), as far as the hard limit lets it.
    private static func raiseDescriptorLimit(for clients: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(clients + 64)
        guard limit.rlim_cur < wanted else { return }
        let previous = limit.rlim_cur
        limit.rlim_cur = min(wanted, limit.rlim_max)
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < wanted {
            logger.warning(
                "the descriptor limit allows fewer clients than clients.max_clients",
                metadata: ["limit": "\(limit.rlim_cur)", "max_clients": "\(clients)"])
        } else {
            logger.debug("raised the descriptor limit", metadata: ["from": "\(previous)", "to": "\(limit.rlim_cur)"])
        }
    }

    func run() async {
        try? await gracefulShutdown()
        await server.shutdown()
    }
}
