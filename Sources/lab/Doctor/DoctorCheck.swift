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
    case lessonRun
    case exerciseCheck

    static let allCases: [DoctorCheck] = [.toolchain, .headers, .products, .loopbackPort, .outputFolder, .freeDisk]
        + OptionalTool.allCases.map(DoctorCheck.tool) + [.lessonRun, .exerciseCheck]

    var title: String {
        switch self {
        case .toolchain: "toolchain"
        case .headers: "headers"
        case .products: "products"
        case .loopbackPort: "loopback port"
        case .outputFolder: "output folder"
        case .freeDisk: "free disk"
        case .tool(let tool): tool.rawValue
        case .lessonRun: "lesson run"
        case .exerciseCheck: "exercise check"
        }
    }

    /// The checks whose problem stops this one from being run at all.
    var needs: [DoctorCheck] {
        switch self {
        case .lessonRun, .exerciseCheck: [.toolchain, .products, .loopbackPort, .outputFolder]
        default: []
        }
    }
}

/// A program the lab uses when it is there, and runs without.
enum OptionalTool: String, CaseIterable {
    case curl
    case wget
    case nginx
    case chromium = "chromium-headless-shell"

    /// Debian keeps nginx in /usr/sbin, which is not on a user's PATH.
    var places: [String] { self == .nginx ? ["/usr/sbin/nginx"] : [] }

    /// What a class does without it.
    var lostWithout: String {
        switch self {
        case .curl: "lab compare measures the lessons without curl beside them, and without the loopback limit and the upload reference"
        case .wget: "lab compare measures the lessons without wget beside them"
        case .nginx: "no comparison against nginx (lab compare --server, and the connections comparison), and the real-peer tests skip"
        case .chromium: "the tests that open the class's page in a browser skip; the lab itself does not need it"
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
