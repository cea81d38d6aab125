// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "DownloadLab",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lab", targets: ["lab"]),
        .executable(name: "lab-measure", targets: ["lab-measure"]),
        .executable(name: "foundation-floor", targets: ["foundation-floor"]),
        .executable(name: "lesson-00-small-file", targets: ["lesson-00-small-file"]),
        .executable(name: "lesson-01-in-memory", targets: ["lesson-01-in-memory"]),
        .executable(name: "lesson-02-filehandle", targets: ["lesson-02-filehandle"]),
        .executable(name: "lesson-03-outputstream", targets: ["lesson-03-outputstream"]),
        .executable(name: "lesson-04-session-data-task", targets: ["lesson-04-session-data-task"]),
        .executable(name: "lesson-05-download-task-resume", targets: ["lesson-05-download-task-resume"]),
        .executable(name: "lesson-06-runloop-thread", targets: ["lesson-06-runloop-thread"]),
        .executable(name: "lesson-07-multipart-upload", targets: ["lesson-07-multipart-upload"]),
        .executable(name: "lesson-08-async-await", targets: ["lesson-08-async-await"]),
        .executable(name: "exercise-00-small-file", targets: ["exercise-00-small-file"]),
        .executable(name: "exercise-01-in-memory", targets: ["exercise-01-in-memory"]),
        .executable(name: "exercise-02-filehandle", targets: ["exercise-02-filehandle"]),
        .executable(name: "exercise-03-outputstream", targets: ["exercise-03-outputstream"]),
        .executable(name: "exercise-04-session-data-task", targets: ["exercise-04-session-data-task"]),
        .executable(name: "exercise-05-download-task-resume", targets: ["exercise-05-download-task-resume"]),
        .executable(name: "exercise-06-runloop-thread", targets: ["exercise-06-runloop-thread"]),
        .executable(name: "exercise-07-multipart-upload", targets: ["exercise-07-multipart-upload"]),
        .executable(name: "exercise-08-async-await", targets: ["exercise-08-async-await"]),
        .library(name: "LabKit", targets: ["LabKit"]),
        .library(name: "LabServer", targets: ["LabServer"]),
        .library(name: "LabReport", targets: ["LabReport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", "2.101.2"..<"2.102.0"),
    ],
    targets: [
        // libxml2 from the system (Debian: libxml2-dev); the HTML report renders through it.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(
            name: "LabServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "LabKit",
            dependencies: [
                "LabServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Each lesson's defects, the runs that expose them, hints, and the exercises' starting code.
        .target(name: "LabCatalogue"),
        // results.json and the HTML report drawn from it.
        .target(name: "LabReport", dependencies: ["CLibXML2"]),
        .executableTarget(
            name: "lab",
            dependencies: [
                "LabServer", "LabKit", "LabReport", "LabCatalogue",
                // `lab compare` runs these as child processes; listing them here makes
                // `swift run lab compare` build them first.
                "lab-measure", "foundation-floor",
                "lesson-00-small-file", "lesson-01-in-memory", "lesson-02-filehandle", "lesson-03-outputstream",
                "lesson-04-session-data-task", "lesson-05-download-task-resume", "lesson-06-runloop-thread",
                "lesson-07-multipart-upload", "lesson-08-async-await",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Starts each process `lab compare` measures; in C, so it stays small (see main.c).
        .executableTarget(name: "lab-measure"),
        // Foundation's floor: a bare URLSession download that `lab compare` measures beside curl.
        .executableTarget(name: "foundation-floor"),
        .executableTarget(name: "lesson-00-small-file", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-01-in-memory", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-02-filehandle", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-03-outputstream", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-04-session-data-task", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-05-download-task-resume", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-06-runloop-thread", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-07-multipart-upload", dependencies: ["LabKit"]),
        .executableTarget(name: "lesson-08-async-await", dependencies: ["LabKit"]),
        // The students' copies of the article variants (`lab exercise reset` writes them). `lab`
        // does not depend on them: it builds one when asked to check it, so code that does not
        // compile yet never stops the lab itself from building.
        .executableTarget(name: "exercise-00-small-file", dependencies: ["LabKit"], path: "Sources/Exercises/00-small-file"),
        .executableTarget(name: "exercise-01-in-memory", dependencies: ["LabKit"], path: "Sources/Exercises/01-in-memory"),
        .executableTarget(name: "exercise-02-filehandle", dependencies: ["LabKit"], path: "Sources/Exercises/02-filehandle"),
        .executableTarget(name: "exercise-03-outputstream", dependencies: ["LabKit"], path: "Sources/Exercises/03-outputstream"),
        .executableTarget(name: "exercise-04-session-data-task", dependencies: ["LabKit"], path: "Sources/Exercises/04-session-data-task"),
        .executableTarget(name: "exercise-05-download-task-resume", dependencies: ["LabKit"], path: "Sources/Exercises/05-download-task-resume"),
        .executableTarget(name: "exercise-06-runloop-thread", dependencies: ["LabKit"], path: "Sources/Exercises/06-runloop-thread"),
        .executableTarget(name: "exercise-07-multipart-upload", dependencies: ["LabKit"], path: "Sources/Exercises/07-multipart-upload"),
        .executableTarget(name: "exercise-08-async-await", dependencies: ["LabKit"], path: "Sources/Exercises/08-async-await"),
        .testTarget(
            name: "LabServerTests",
            dependencies: ["LabServer", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "LabKitTests", dependencies: ["LabKit", "LabServer"]),
        .testTarget(name: "CLibXML2Tests", dependencies: ["CLibXML2"]),
        .testTarget(name: "LabReportTests", dependencies: ["LabReport", "CLibXML2"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "LabKit", "LabServer", "LabReport", "LabCatalogue", "lab", "lab-measure", "foundation-floor",
                "lesson-00-small-file",
                "lesson-01-in-memory",
                "lesson-02-filehandle",
                "lesson-03-outputstream",
                "lesson-04-session-data-task",
                "lesson-05-download-task-resume",
                "lesson-06-runloop-thread",
                "lesson-07-multipart-upload",
                "lesson-08-async-await",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
