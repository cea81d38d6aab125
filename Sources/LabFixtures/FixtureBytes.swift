/// The pseudo-random byte stream behind a fixture.
///
/// Byte `i` is byte `i % 8` (little-endian) of word `i / 8`, and word `w` is
/// `mix(seed + (w + 1) * gamma)`: the SplitMix64 generator evaluated directly at position `w`.
/// Because no word depends on the previous one, any offset can be produced without
/// generating what comes before it.
struct FixtureBytes {
    let seed: UInt64

    private static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// SplitMix64's finalizer: turns a counter into well-scrambled bits.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }

    /// FNV-1a over the name, then the generation folded in, so that `a` generation 1 and
    /// `a` generation 0 are unrelated streams.
    static func seed(name: String, generation: Int) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return mix(hash ^ mix(UInt64(generation) &+ gamma))
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int64) {
        guard let destination = buffer.baseAddress, buffer.count > 0 else { return }
        precondition(offset >= 0, "fixture offsets start at 0")
        let firstWord = UInt64(offset / 8)
        let skippedBytes = Int(offset % 8)
        let destinationIsAligned = Int(bitPattern: destination) % MemoryLayout<UInt64>.alignment == 0
        if skippedBytes == 0 && destinationIsAligned {
            let wholeWords = buffer.count / 8
            generateWords(into: destination.bindMemory(to: UInt64.self, capacity: wholeWords),
                          count: wholeWords, firstWord: firstWord)
            let done = wholeWords * 8
            if done < buffer.count {
                copyViaScratch(into: destination + done, count: buffer.count - done,
                               firstWord: firstWord + UInt64(wholeWords), skippedBytes: 0)
            }
        } else {
            copyViaScratch(into: destination, count: buffer.count, firstWord: firstWord, skippedBytes: skippedBytes)
        }
    }

    /// The slower path for an unaligned start: words are generated into an aligned scratch
    /// area on the stack and copied byte-wise, because storing a `UInt64` through a
    /// misaligned typed pointer is undefined behaviour.
    private func copyViaScratch(into destination: UnsafeMutableRawPointer, count: Int,
                                firstWord: UInt64, skippedBytes: Int) {
        let scratchWords = 1024
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: scratchWords + 1) { scratch in
            var written = 0
            var word = firstWord
            var skip = skippedBytes
            while written < count {
                let wordsNeeded = min(scratchWords + 1, (skip + count - written + 7) / 8)
                generateWords(into: scratch.baseAddress!, count: wordsNeeded, firstWord: word)
                let available = wordsNeeded * 8 - skip
                let take = min(available, count - written)
                (destination + written).copyMemory(from: UnsafeRawPointer(scratch.baseAddress!) + skip, byteCount: take)
                written += take
                word += UInt64(wordsNeeded)
                skip = 0
            }
        }
    }

    /// The hot loop. It is written out by hand, four words per iteration, with wrapping
    /// arithmetic only, because tests stream gigabytes through it in unoptimized debug builds
    /// where every helper call and overflow check would cost real time.
    private func generateWords(into words: UnsafeMutablePointer<UInt64>, count: Int, firstWord: UInt64) {
        let gamma = Self.gamma
        let gamma2 = gamma &* 2, gamma3 = gamma &* 3, gamma4 = gamma &* 4
        var counter = seed &+ firstWord &* gamma
        var index = 0
        while index &+ 4 <= count {
            var a = counter &+ gamma
            var b = counter &+ gamma2
            var c = counter &+ gamma3
            var d = counter &+ gamma4
            counter = d
            a = (a ^ (a &>> 30)) &* 0xBF58_476D_1CE4_E5B9
            b = (b ^ (b &>> 30)) &* 0xBF58_476D_1CE4_E5B9
            c = (c ^ (c &>> 30)) &* 0xBF58_476D_1CE4_E5B9
            d = (d ^ (d &>> 30)) &* 0xBF58_476D_1CE4_E5B9
            a = (a ^ (a &>> 27)) &* 0x94D0_49BB_1331_11EB
            b = (b ^ (b &>> 27)) &* 0x94D0_49BB_1331_11EB
            c = (c ^ (c &>> 27)) &* 0x94D0_49BB_1331_11EB
            d = (d ^ (d &>> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = (a ^ (a &>> 31))
            words[index &+ 1] = (b ^ (b &>> 31))
            words[index &+ 2] = (c ^ (c &>> 31))
            words[index &+ 3] = (d ^ (d &>> 31))
            index = index &+ 4
        }
        while index < count {
            counter = counter &+ gamma
            words[index] = Self.mix(counter)
            index = index &+ 1
        }
        #if _endian(big)
        // The stream is defined little-endian. Converting inside the loop would halve the
        // debug-build speed on the little-endian machines everyone uses, so swap afterwards.
        for index in 0..<count {
            words[index] = words[index].byteSwapped
        }
        #endif
    }
}
