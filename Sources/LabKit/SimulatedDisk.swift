import Foundation
import Synchronization

/// Every lesson writes through here, which lets the lab count the bytes written and pretend
/// the disk is slow (`--write-delay-us`), to show what a slow consumer does to memory.
public enum SimulatedDisk {
    static let writeDelayMicroseconds = Atomic<Int>(0)
    static let bytesWritten = Atomic<Int>(0)

    static func didWrite(_ count: Int) {
        if count > 0 { bytesWritten.add(count, ordering: .relaxed) }
        let delay = writeDelayMicroseconds.load(ordering: .relaxed)
        if delay > 0 { usleep(UInt32(delay)) }
    }
}

extension OutputStream {
    /// One `write(_:maxLength:)` call with the bytes of `data`. Returns what that call returned:
    /// the number of bytes written, which may be fewer than `data.count`, or -1 on error.
    public func write(_ data: Data) -> Int {
        let written = data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return 0 }
            return write(base, maxLength: bytes.count)
        }
        SimulatedDisk.didWrite(written)
        return written
    }
}
