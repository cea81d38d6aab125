import Foundation

/// What `lab doctor` checks, in the order its table shows them. A check that needs another one
/// is not run when that one found a problem: its row says which.
enum DoctorCheck: Hashable {
    case toolchain
    case headers
    case products
    case loopbackPort
    case outputFolder
    case freeDisk
    case tool(OptionalTool)
    case testTool(TestTool)
    case lessonRun
    case comparison
    case exerciseCheck

    static let allCases: [DoctorCheck] = [.toolchain, .headers, .products, .loopbackPort, .outputFolder, .freeDisk]
        + OptionalTool.allCases.map(DoctorCheck.tool) + TestTool.allCases.map(DoctorCheck.testTool) + [.lessonRun, .comparison, .exerciseCheck]

    var title: String {
        switch self {
        case .toolchain: "toolchain"
        case .headers: "headers"
        case .products: "products"
        case .loopbackPort: "loopback port"
        case .outputFolder: "output folder"
        case .freeDisk: "free disk"
        case .tool(let tool): tool.rawValue
        case .testTool(let tool): tool.rawValue
        case .lessonRun: "lesson run"
        case .comparison: "lab compare"
        case .exerciseCheck: "exercise check"
        }
    }

    /// The checks whose problem stops this one from being run at all.
    var needs: [DoctorCheck] {
        switch self {
        case .lessonRun, .comparison, .exerciseCheck: [.toolchain, .products, .loopbackPort, .outputFolder]
        default: []
        }
    }
}

/// A program the lab uses when it is there, and runs without.
enum OptionalTool: String, CaseIterable {
    case curl
    case wget
    case aria2c
    case chromium = "chromium-headless-shell"

    /// What a class does without it.
    var lostWithout: String {
        switch self {
        case .curl: "lab compare measures the lessons without curl beside them, and without the loopback limit and the upload reference"
        case .wget: "lab compare measures the lessons without wget beside them"
        case .aria2c: "lab compare's connections comparison measures lesson 11 without aria2c, the download manager beside it"
        case .chromium: "the tests that open the class's page in a browser skip; the lab itself does not need it"
        }
    }
}

/// What the README's two commands need in full besides the toolchain: without it `swift test`
/// skips or fails tests and `lab compare` leaves a comparison out, so the doctor calls it a
/// problem, where an optional tool is only missing.
enum TestTool: String, CaseIterable {
    case nginx
    case jsonschema = "python3 jsonschema"

    /// What is lost without it, and how to get it.
    var neededFor: String {
        switch self {
        case .nginx: "lab compare's connections comparison and the real-peer tests serve through nginx (Debian: apt-get install nginx; Homebrew: brew install nginx)"
        case .jsonschema: "the HAR tests check each archive against HAR 1.2 with it (python3 -m pip install jsonschema)"
        }
    }
}

/// One row of the table.
struct DoctorFinding {
    enum Verdict: String {
        case ok
        /// An optional tool that is not here: something is lost, and a class still runs.
        case missing
        case problem
        case notRun = "not run"
    }

    let check: DoctorCheck
    let verdict: Verdict
    let detail: String

    /// Whether a class cannot run until this is fixed.
    var stopsAClass: Bool { verdict == .problem || verdict == .notRun }
}
