import Foundation
import LabCatalogue
import LabClass
import LabPlatform
import LabReport
import LabVocabulary
import Synchronization
import TestServers
import TestThreads
import Testing

/// The exports' published field lists, checked by formats.py (next to browser.py).
enum ClassFormats {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/Class")
    static let script = folder.appendingPathComponent("formats.py")
    static let junitSchema = folder.appendingPathComponent("junit.xsd")
}

/// A TCP connection that sends nothing, to see when the server closes it.
final class LoopbackClient: Sendable {
    let descriptor: Int32

    /// Connected from `source`, any address of the loopback range: each counts as a client of its own.
    init?(port: Int, from source: String = "127.0.0.1") {
        descriptor = socket(AF_INET, Platform.streamSocket, 0)
        guard descriptor >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound else {
            Foundation.close(descriptor)
            return nil
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            Foundation.close(descriptor)
            return nil
        }
    }

    /// Whether the server has closed its end: a read that does not wait returns end of file.
    var wasClosedByServer: Bool {
        var byte: UInt8 = 0
        let read = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT))
        return read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    func close() { Foundation.close(descriptor) }
}

/// The highest resident memory of a process, sampled every 50 ms until stopped.
final class RSSSampler: Sendable {
    private let state = Mutex((highest: Int64(0), running: true))

    init(pid: Int32) {
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.running }) {
                if let now = Platform.residentBytes(ofProcess: pid) { state.withLock { $0.highest = max($0.highest, now) } }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    var highest: Int64 { state.withLock { $0.highest } }
    func stop() { state.withLock { $0.running = false } }
}
