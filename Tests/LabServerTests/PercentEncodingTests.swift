import LabVocabulary
import Testing

/// The one `%XX` encoder: what it keeps, and that the lab's decoder reads back every text.
struct PercentEncodingTests {
    @Test(arguments: ["plain", "a b/c?d=e&f", "..%2F..%2Fetc", "name \"quoted\"\r\n", "é 漢字 🙂", "", "-._~:+,!#$&^`|"])
    func decodingAnEncodingGivesTheText(text: String) throws {
        for kept in ["", "-._~", "-._~:+,", "!#$&+-.^_`|~"] {
            let encoded = PercentEncoding.encoded(text, keeping: kept)
            #expect(PercentEncoding.decoded(encoded) == text, "\(encoded)")
            let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%".utf8).union(kept.utf8)
            #expect(encoded.utf8.allSatisfy(plain.contains), "\(encoded) keeps a byte it should encode")
        }
    }

    @Test func whatIsKeptAndWhatIsNot() {
        #expect(PercentEncoding.encoded("a+b,c:d e/é", keeping: "-._~:+,") == "a+b,c:d%20e%2F%C3%A9")
        #expect(PercentEncoding.encoded("a+b", keeping: "") == "a%2Bb")
        #expect(PercentEncoding.encoded("max-age=60", keeping: "-._~=") == "max-age=60")
    }
}
