// swift-tools-version:6.0
import Foundation
import PackageDescription

/// The functions a start and a session run, in the order the release link lays them out
/// (`scripts/link-order.py` writes it; README, Building).
let linkOrder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .appendingPathComponent("Sources/payservice/link-order.txt").path

/// Our own modules' code generation in a release build: metadata of concrete generic types (a
/// `[String: Product]`'s storage, say) is built by direct accessor calls that pass their witness
/// tables, not demangled from a name at first use, which made the runtime check `String: Hashable`
/// by scanning all 11,400 conformance records of the binary (a fifth of a start's instructions,
/// and a page of data for every 64 KiB those records span); and each function gets its own section,
/// so that link-order.txt can place functions, not whole source files.
let leanCodegen: [SwiftSetting] = [
  .unsafeFlags(
    [
      "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors", "-Xfrontend",
      "-function-sections",
    ], .when(configuration: .release))
]

let package = Package(
  name: "payservice",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "payservice", targets: ["payservice"]),
    .library(name: "PayServiceCore", targets: ["PayServiceCore"]),
  ],
  dependencies: [
    .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    .package(url: "https://github.com/apple/swift-certificates", from: "1.21.0"),
    .package(url: "https://github.com/apple/swift-asn1", from: "1.7.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
    .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
    .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
  ],
  targets: [
    .executableTarget(
      name: "payservice",
      dependencies: ["PayServiceCommands"],
      // A release build is one static executable (Swift runtime, Foundation, SQLite, libstdc++ and
      // glibc linked in; no dynamic loader at start) that exports no symbols: it starts without
      // binding symbols or scanning an export table. It needs the static libraries of
      // libsqlite3-dev and libstdc++-dev;
      // the linker's warnings about dlopen/getpwuid in static programs concern code payservice
      // never calls (SQLite extensions, CoreFoundation bundles and home directories).
      // lld lays the functions of link-order.txt out first, so that what a process runs sits in
      // few pages: the kernel maps text 64 KiB around each touched page, and scattered over the
      // whole binary a one-request start was resident in 17 MB.
      exclude: ["link-order.txt"],
      swiftSettings: leanCodegen + [.unsafeFlags(["-static-executable"], .when(configuration: .release))],
      linkerSettings: [
        .unsafeFlags(
          [
            "-static-executable", "-Xlinker", "--no-export-dynamic", "-use-ld=lld", "-Xlinker",
            "--symbol-ordering-file=\(linkOrder)", "-Xlinker", "--no-warn-symbol-ordering",
          ], .when(configuration: .release))
      ]
    ),
    // The command line: `serve` (read without ArgumentParser on the common start) and the
    // one-shot commands, with what a start opens and checks; the executable only calls it.
    .target(
      name: "PayServiceCommands",
      dependencies: [
        "PayServiceCore", "PayServicePostgres", "PayServiceStripe", "PayServiceAdyen", "PayServiceApplePay",
        "PayServiceAppStore", "PayServiceWallet", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: leanCodegen
    ),
    .target(
      name: "PayServiceCore",
      dependencies: [
        // For libyaml (its CYaml target): the config is composed from libyaml's events
        // (Config/YAMLNode.swift); Yams' own Swift layers are not used.
        .product(name: "Yams", package: "Yams"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
        // Wallet order packages are zip archives (WalletOrders/OrderPackage.swift).
        .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        .target(name: "CBoringSSLDigest", condition: .when(platforms: [.linux])),
      ],
      // The licence of the address data the generated Contacts/AddressData.swift holds.
      exclude: ["Contacts/AddressData.LICENSE"],
      swiftSettings: leanCodegen
    ),
    // BoringSSL's one-shot SHA-256 as swift-crypto's copy of BoringSSL exports it on Linux: the
    // config's digest without the conformance scan swift-crypto's generic digest makes at first
    // use (the header says why).
    .systemLibrary(name: "CBoringSSLDigest"),
    // The store on a PostgreSQL server (`--database postgres://…`): its own module, so that the
    // core builds and fuzzes without SwiftNIO.
    .target(
      name: "PayServicePostgres",
      dependencies: [
        "PayServiceCore",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: leanCodegen
    ),
    // The remote services' HTTPS (`HTTPRemoteTransport`: AsyncHTTPClient over TLS, mutual TLS
    // included), in its own module for the same reason: the core holds only the requests,
    // responses, failures and retries (PayServiceCore/Remote).
    .target(
      name: "PayServiceRemote",
      dependencies: [
        "PayServiceCore",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      swiftSettings: leanCodegen
    ),
    // The Stripe gateway (`gateway.kind: stripe`).
    .target(
      name: "PayServiceStripe",
      dependencies: ["PayServiceCore", "PayServiceRemote"],
      swiftSettings: leanCodegen
    ),
    // The Adyen gateway (`gateway.kind: adyen`): Adyen's Checkout API.
    .target(
      name: "PayServiceAdyen",
      dependencies: ["PayServiceCore", "PayServiceRemote"],
      swiftSettings: leanCodegen
    ),
    // Apple Pay merchant validation (`startMerchantSession`): the merchant identity's mutual TLS
    // to Apple's gateways.
    .target(
      name: "PayServiceApplePay",
      dependencies: ["PayServiceCore", "PayServiceRemote"],
      swiftSettings: leanCodegen
    ),
    // The App Store Server API (transaction and notification history), with an ES256 bearer token.
    .target(
      name: "PayServiceAppStore",
      dependencies: [
        "PayServiceCore", "PayServiceRemote",
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: leanCodegen
    ),
    // Wallet order updates pushed to APNs over HTTP/2 (`APNsClient`), with an ES256 provider token.
    .target(
      name: "PayServiceWallet",
      dependencies: ["PayServiceCore", "PayServiceRemote"],
      swiftSettings: leanCodegen
    ),
    // The fuzz harness: replays inputs when built normally; a libFuzzer fuzzer via Fuzz/run.sh.
    .executableTarget(
      name: "payservice-fuzz",
      dependencies: ["PayServiceCore", "PayServiceFuzzSupport"],
      path: "Fuzz/Sources"
    ),
    // The Stripe test server as a process (Benchmarks/bench.py); it moves no money.
    .executableTarget(
      name: "stripe-test-server",
      dependencies: ["PayServiceTestSupport"],
      path: "Tests/StripeTestServerMain"
    ),
    // The Adyen test server as a process, by hand and for the benchmark; it moves no money.
    .executableTarget(
      name: "adyen-test-server",
      dependencies: ["PayServiceTestSupport"],
      path: "Tests/AdyenTestServerMain"
    ),
    // The APNs test server as a process, by hand: HTTP/2 over TLS; it delivers nothing.
    .executableTarget(
      name: "apns-test-server",
      dependencies: ["PayServiceTestSupport"],
      path: "Tests/APNsTestServerMain"
    ),
    // payservice's stdio server with a method that traps, for the end-to-end test that committed
    // work is answered before a later line ends the process.
    .executableTarget(
      name: "payservice-fault-server",
      dependencies: ["PayServiceCore"],
      path: "Tests/FaultServerMain"
    ),
    // Apple's merchant validation endpoint as a test server process; it issues no real sessions.
    .executableTarget(
      name: "apple-session-test-server",
      dependencies: ["PayServiceTestSupport", "PayServiceCore"],
      path: "Tests/AppleSessionTestServerMain"
    ),
    // Apple Pay's Merchant Token Management API as a test server process; it unlinks no real tokens.
    .executableTarget(
      name: "merchant-token-test-server",
      dependencies: ["PayServiceTestSupport", "PayServiceCore"],
      path: "Tests/MerchantTokenTestServerMain"
    ),
    // The test support the fuzz harness needs (the test config, the oracles, App Store claims signed
    // under a test chain, Apple Pay tokens from a test authority): the core and the crypto libraries only, so that the fuzzer's sanitizer
    // build compiles no SwiftNIO. PayServiceTestSupport re-exports it.
    .target(
      name: "PayServiceFuzzSupport",
      dependencies: [
        "PayServiceCore",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
      ],
      path: "Tests/PayServiceFuzzSupport"
    ),
    .target(
      name: "PayServiceTestSupport",
      dependencies: [
        "PayServiceFuzzSupport", "PayServiceCore", "PayServicePostgres", "PayServiceStripe", "PayServiceAdyen",
        "PayServiceApplePay", "PayServiceAppStore",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
      ],
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
      name: "PayServiceStripeTests",
      dependencies: [
        "PayServiceStripe", "PayServiceCore", "PayServiceTestSupport",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ]
    ),
    .testTarget(
      name: "PayServiceAdyenTests",
      dependencies: [
        "PayServiceAdyen", "PayServiceCore", "PayServiceTestSupport",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      // The notification vectors Adyen's own library signed, and its licence, read by path.
      exclude: ["Fixtures"]
    ),
    .testTarget(
      name: "PayServiceRemoteTests",
      dependencies: ["PayServiceRemote", "PayServiceCore", "PayServiceTestSupport"]
    ),
    .testTarget(
      name: "PayServiceApplePayTests",
      dependencies: ["PayServiceApplePay", "PayServiceCore", "PayServiceRemote", "PayServiceTestSupport"]
    ),
    .testTarget(
      name: "PayServiceAppStoreTests",
      dependencies: [
        "PayServiceAppStore", "PayServiceCore", "PayServiceTestSupport",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ],
      // Apple's test key and its licence, read by path.
      exclude: ["Fixtures"]
    ),
    .testTarget(
      name: "PayServiceWalletTests",
      dependencies: [
        "PayServiceWallet", "PayServiceCore", "PayServiceTestSupport",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "payservice", "PayServiceCommands", "PayServiceTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      exclude: ["Golden", "Fixtures"]
    ),
  ]
)
