import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabPlatform

extension URLSessionTask {
    /// `cancel()`, made to stop the bytes at once, as a cancel does on iOS.
    ///
    /// On Linux `cancel()` is queued on the session's work queue, the thread that reads the
    /// socket and hands chunks to the delegate queue. While the sender is faster than the
    /// delegate (always, with a bounded delegate queue), that queue never falls idle, so the
    /// cancel lands only when the body has ended: the rest of the file crosses the wire for
    /// nothing. So this first shuts down the task's connection: libcurl reads what is already in
    /// the socket, sees the connection end, and the task completes now. The cancel itself is then
    /// asked for from another thread, so no caller ever waits, not even the delegate queue.
    ///
    /// The task completes with an error (cancelled, or the connection lost), or without one when
    /// its body's end was the connection's close; its delegate still receives what had already
    /// arrived. Where the connection was shut down, the task ends from libcurl's side and no
    /// `cancel()` is sent to race that end (`CancelWhileCompleting`). On Apple's systems the seam
    /// shuts nothing down, and this is `cancel()`, asked for from another thread.
    public func cancelAtOnce() {
        let shutDown = (response?.url ?? currentRequest?.url).map { Platform.shutDownReceivingConnections(to: $0) } ?? 0
        CancelWhileCompleting.cancel(self) {
            if shutDown > 0 {
                let deadline = Date().addingTimeInterval(2)
                while !CancelWhileCompleting.isCompleting(self), Date() < deadline { usleep(2_000) }
            }
            if !CancelWhileCompleting.isCompleting(self) { self.cancel() }
        }
    }
}
