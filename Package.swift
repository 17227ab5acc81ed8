// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "payservice",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "payservice", targets: ["payservice"]),
    .library(name: "PayServiceCore", targets: ["PayServiceCore"]),
  ],
  dependencies: [
    .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
  ],
  targets: [
    .executableTarget(
      name: "payservice",
      dependencies: [
        "PayServiceCore",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      // A release build links the Swift runtime and Foundation statically: the dynamic loader's
      // symbol binding was a third of a cold start (issue 5).
      swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
      linkerSettings: [.unsafeFlags(["-static-stdlib", "-Xclang-linker", "-no-pie"], .when(configuration: .release))]
    ),
    .target(
      name: "PayServiceCore",
      dependencies: [
        .product(name: "Yams", package: "Yams"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    // The fuzz harness: replays inputs when built normally; a libFuzzer fuzzer via Fuzz/run.sh.
    .executableTarget(
      name: "payservice-fuzz",
      dependencies: ["PayServiceCore", "PayServiceTestSupport"],
      path: "Fuzz/Sources"
    ),
    .target(
      name: "PayServiceTestSupport",
      dependencies: ["PayServiceCore"],
      path: "Tests/PayServiceTestSupport"
    ),
    .testTarget(
      name: "PayServiceCoreTests",
      dependencies: [
        "PayServiceCore", "PayServiceTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
      ],
      exclude: ["Fixtures"]
    ),
    .testTarget(
      name: "EndToEndTests",
      dependencies: ["payservice", "PayServiceTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
      exclude: ["Golden"]
    ),
  ]
)
