// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "DownloadLab",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lab", targets: ["lab"]),
        .executable(name: "lesson-03-outputstream", targets: ["lesson-03-outputstream"]),
        .library(name: "LabKit", targets: ["LabKit"]),
        .library(name: "LabServer", targets: ["LabServer"]),
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
        .executableTarget(
            name: "lab",
            dependencies: [
                "LabServer", "LabKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "lesson-03-outputstream", dependencies: ["LabKit"]),
        .testTarget(
            name: "LabServerTests",
            dependencies: ["LabServer", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "LabKitTests", dependencies: ["LabKit", "LabServer"]),
        .testTarget(name: "CLibXML2Tests", dependencies: ["CLibXML2"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["LabKit", "LabServer", "lesson-03-outputstream", "lab"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
