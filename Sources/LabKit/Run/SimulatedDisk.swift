import Foundation
import LabVocabulary
import Synchronization

/// Every lesson writes through here (`OutputStream.write(_:)`, `FileHandle.write(contentsOf:)`,
/// `Data.write(to:)` below), which lets the lab count the bytes written and pretend the disk is
/// slow (`--write-delay-us`) or fills up (`--disk-full-after`).
public enum SimulatedDisk {
    package static let writeDelayMicroseconds = Atomic<Int>(0)
    package static let capacity = Atomic<Int>(.max)
    package static let bytesWritten = Atomic<Int>(0)

    /// How many of `count` bytes still fit; a full disk takes what fits, then nothing.
    static func room(for count: Int) -> Int {
        max(0, min(count, capacity.load(ordering: .relaxed) - bytesWritten.load(ordering: .relaxed)))
    }

    static func didWrite(_ count: Int) {
        if count > 0 { bytesWritten.add(count, ordering: .relaxed) }
        let delay = writeDelayMicroseconds.load(ordering: .relaxed)
        if delay > 0 { usleep(UInt32(delay)) }
    }
}

extension OutputStream {
    /// One `write(_:maxLength:)` call with the bytes of `data`. Returns what that call returned:
    /// the number of bytes written, which may be fewer than `data.count`, or -1 on error, with
    /// `errno` saying why. Like a real full disk, the simulated one first accepts what fits, then
    /// fails with ENOSPC.
    public func write(_ data: Data) -> Int {
        let room = SimulatedDisk.room(for: data.count)
        guard room > 0 || data.isEmpty else {
            errno = ENOSPC
            return -1
        }
        let written = data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return 0 }
            return write(base, maxLength: room)
        }
        SimulatedDisk.didWrite(written)
        return written
    }
}

extension FileHandle {
    /// Foundation's `write(contentsOf:)`, for `Data`, through the simulated disk. A full disk
    /// takes what fits, then throws as a real one does (ENOSPC).
    public func write(contentsOf data: Data) throws {
        let room = SimulatedDisk.room(for: data.count)
        do {
            // A raw buffer selects Foundation's generic write(contentsOf:), not this method.
            try data.prefix(room).withUnsafeBytes { try write(contentsOf: $0) }
        } catch {
            // The cause ("File too large"), not Foundation's "The operation could not be completed".
            throw posixError(under: error) ?? error
        }
        SimulatedDisk.didWrite(room)
        if room < data.count { throw POSIXError(.ENOSPC) }
    }
}

extension Data {
    /// Foundation's `write(to:)`, through the simulated disk: one write of the whole buffer. A full
    /// disk keeps what fits, then throws as a real one does (ENOSPC).
    public func write(to url: URL) throws {
        let room = SimulatedDisk.room(for: count)
        do {
            try prefix(room).write(to: url, options: [])
        } catch {
            // The cause ("File too large"), not Foundation's "The operation could not be completed".
            throw posixError(under: error) ?? error
        }
        SimulatedDisk.didWrite(room)
        if room < count { throw POSIXError(.ENOSPC) }
    }
}
