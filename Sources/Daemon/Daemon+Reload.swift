import Foundation
import Store
import Systemd

extension Daemon.Scheduler {
    /// SIGHUP, taken between runs (`Daemon.requestReload` only raises the flag): says
    /// `RELOADING=1`, reads the configuration again and checks its templates; in force only when
    /// both pass — with new kept sessions (the database may have moved) and the back-off
    /// forgotten —, the previous one staying otherwise. `READY=1` either way.
    func reload() {
        daemon.reloadRequested.withLock { $0 = false }
        systemd.reloading()
        do {
            let fresh = try daemon.reloadConfiguration()
            let texts = try Daemon.validate(fresh)
            configuration = fresh
            daemon.pageTexts.withLock { $0 = texts }
            daemon.keeper.withLock { $0 = SessionKeeper(fresh.database, senders: fresh.smtp.connections) }
            notBefore = .distantPast
            logger.notice("configuration reloaded", metadata: NotifierEvent.configurationReloaded.metadata)
        } catch {
            logger.error("configuration reload refused, the previous configuration stays in force: \(error)",
                         metadata: NotifierEvent.configurationRejected.metadata)
        }
        systemd.ready(status: "waiting; " + waitingStatus(next: (try? currentSlots()) ?? serviceSlots))
    }
}
