import Crypto
import Foundation
import Logging
import PayServiceAppStore
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The App Store Server API client against the test server over real TLS: pages read exactly,
/// each failure mapped as documented, retries counted, the bearer token's fields.
@Suite("App Store Server API client")
struct AppStoreServerClientTests {
  typealias Fixture = AppStoreFixture

  /// Five transactions of one customer, signed as the App Store signs them.
  static func chain(_ authority: AppStoreTestAuthority, original: String, first: Int, count: Int) throws
    -> [(transactionId: String, originalTransactionId: String, signedTransaction: String)]
  {
    var transactions: [(transactionId: String, originalTransactionId: String, signedTransaction: String)] = []
    for index in 0..<count {
      let id = String(Int(original)! + first + index)
      let jws = try authority.sign(
        #"{"transactionId":"\#(id)","originalTransactionId":"\#(original)","bundleId":"com.example","environment":"Sandbox"}"#)
      transactions.append((id, original, jws))
    }
    return transactions
  }

  @Test("transaction history of a chain over three pages: the JWS in order, revisions passed back, hasMore false at the end")
  func historyPages() async throws {
    let server = try Fixture.server(historyPageSize: 2)
    defer { server.shutdown() }
    let authority = try AppStoreTestAuthority()
    let chain = try Self.chain(authority, original: "2000000000000100", first: 0, count: 5)
    let other = try Self.chain(authority, original: "2000000000000900", first: 0, count: 2)
    // Another customer's transactions between this one's: not in its history.
    server.addTransactions(Array(chain[0..<2]) + other + Array(chain[2...]), environment: .sandbox)
    let client = try AppStoreServerClient(settings: server.settings(keyPEM: try Fixture.keyPEM()))
    defer { client.shutdown() }

    let first = try await client.transactionHistory(transactionId: chain[2].transactionId, revision: nil, environment: .sandbox).get()
    #expect(first.signedTransactions == [chain[0].signedTransaction, chain[1].signedTransaction])
    #expect(first.hasMore)
    let firstRevision = try #require(first.revision)
    let second = try await client.transactionHistory(
      transactionId: chain[2].transactionId, revision: firstRevision, environment: .sandbox
    ).get()
    #expect(second.signedTransactions == [chain[2].signedTransaction, chain[3].signedTransaction])
    #expect(second.hasMore)
    let secondRevision = try #require(second.revision)
    let third = try await client.transactionHistory(
      transactionId: chain[2].transactionId, revision: secondRevision, environment: .sandbox
    ).get()
    #expect(third.signedTransactions == [chain[4].signedTransaction])
    #expect(third.hasMore == false)
    #expect(third.revision != nil)
    #expect(Set([firstRevision, secondRevision, third.revision!]).count == 3)

    let requests = server.requests
    #expect(requests.map(\.method) == ["GET", "GET", "GET"])
    #expect(requests.map(\.path) == Array(repeating: "/inApps/v2/history/2000000000000102", count: 3))
    #expect(
      requests.map(\.query) == [
        "sort=ASCENDING", "sort=ASCENDING&revision=\(firstRevision)", "sort=ASCENDING&revision=\(secondRevision)",
      ])
    #expect(requests.allSatisfy { $0.tokenValid && $0.environment == .sandbox && $0.status == 200 })
  }

  @Test("each environment at its own URL: a sandbox transaction is not found in production")
  func environments() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    server.addTransactions([("2000000000000201", "2000000000000201", "sandbox-jws")], environment: .sandbox)
    server.addTransactions([("2000000000000301", "2000000000000301", "production-jws")], environment: .production)
    let client = try AppStoreServerClient(settings: server.settings(keyPEM: try Fixture.keyPEM()))
    defer { client.shutdown() }

    let production = await client.transactionHistory(transactionId: "2000000000000301", revision: nil, environment: .production)
    #expect(production.map(\.signedTransactions) == .success(["production-jws"]))
    let sandbox = await client.transactionHistory(transactionId: "2000000000000201", revision: nil, environment: .sandbox)
    #expect(sandbox.map(\.signedTransactions) == .success(["sandbox-jws"]))
    let crossed = await client.transactionHistory(transactionId: "2000000000000201", revision: nil, environment: .production)
    #expect(
      crossed
        == .failure(
          .notFound(
            errorCode: 4_040_010,
            message: """
              the App Store Server API answered GET /inApps/v2/history/2000000000000201 (Production) with 404: \
              "Transaction id not found." (errorCode 4040010)
              """)))
    #expect(server.requests.map(\.environment) == [.production, .sandbox, .production])
  }

  @Test("notification history: the failed ones only when asked, in pages with a pagination token")
  func notificationHistory() async throws {
    let server = try Fixture.server(notificationPageSize: 2)
    defer { server.shutdown() }
    let records: [(String, Int64, Bool)] = [
      ("n-1000-ok", 1_000, true), ("n-2000-failed", 2_000, false), ("n-3000-failed", 3_000, false),
      ("n-4000-ok", 4_000, true), ("n-5000-failed", 5_000, false), ("n-9000-failed", 9_000, false),
    ]
    // Registered out of order: answered by signedDate.
    for (payload, date, delivered) in records.reversed() {
      server.addNotification(signedPayload: payload, signedDate: date, delivered: delivered, environment: .sandbox)
    }
    server.addNotification(signedPayload: "production-failed", signedDate: 2_500, delivered: false, environment: .production)
    let client = try AppStoreServerClient(settings: server.settings(keyPEM: try Fixture.keyPEM()))
    defer { client.shutdown() }

    let failures1 = try await client.notificationHistory(
      startDate: 1_000, endDate: 5_000, onlyFailures: true, paginationToken: nil, environment: .sandbox
    ).get()
    #expect(failures1.signedPayloads == ["n-2000-failed", "n-3000-failed"])
    #expect(failures1.hasMore)
    let token = try #require(failures1.paginationToken)
    let failures2 = try await client.notificationHistory(
      startDate: 1_000, endDate: 5_000, onlyFailures: true, paginationToken: token, environment: .sandbox
    ).get()
    #expect(failures2 == AppStoreNotificationHistoryPage(signedPayloads: ["n-5000-failed"], paginationToken: nil, hasMore: false))

    let all1 = try await client.notificationHistory(
      startDate: 1_500, endDate: 4_500, onlyFailures: false, paginationToken: nil, environment: .sandbox
    ).get()
    #expect(all1.signedPayloads == ["n-2000-failed", "n-3000-failed"])
    #expect(all1.hasMore)
    let all2 = try await client.notificationHistory(
      startDate: 1_500, endDate: 4_500, onlyFailures: false, paginationToken: all1.paginationToken, environment: .sandbox
    ).get()
    #expect(all2 == AppStoreNotificationHistoryPage(signedPayloads: ["n-4000-ok"], paginationToken: nil, hasMore: false))

    // A token is good only for the request it was issued for.
    let misused = await client.notificationHistory(
      startDate: 1_500, endDate: 4_500, onlyFailures: true, paginationToken: token, environment: .sandbox)
    #expect(
      misused
        == .failure(
          .invalidRequest(
            errorCode: 4_000_014,
            message: """
              the App Store Server API refused POST /inApps/v1/notifications/history (Sandbox) with 400: \
              "Invalid pagination token." (errorCode 4000014)
              """)))
    let production = try await client.notificationHistory(
      startDate: 0, endDate: 10_000, onlyFailures: true, paginationToken: nil, environment: .production
    ).get()
    #expect(production.signedPayloads == ["production-failed"])

    let requests = server.requests
    #expect(requests.map(\.method) == Array(repeating: "POST", count: 6))
    #expect(requests.map(\.path) == Array(repeating: "/inApps/v1/notifications/history", count: 6))
    #expect(requests.map(\.query) == ["", "paginationToken=\(token)", "", "paginationToken=\(all1.paginationToken!)", "paginationToken=\(token)", ""])
    #expect(
      requests.map(\.body) == [
        #"{"startDate":1000,"endDate":5000,"onlyFailures":true}"#,
        #"{"startDate":1000,"endDate":5000,"onlyFailures":true}"#,
        #"{"startDate":1500,"endDate":4500,"onlyFailures":false}"#,
        #"{"startDate":1500,"endDate":4500,"onlyFailures":false}"#,
        #"{"startDate":1500,"endDate":4500,"onlyFailures":true}"#,
        #"{"startDate":0,"endDate":10000,"onlyFailures":true}"#,
      ])
    #expect(requests.map(\.status) == [200, 200, 200, 200, 400, 200])
  }

  @Test("a token the server refuses (another key, another bundle id, another key id) is .unauthorized, not retried")
  func unauthorized() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    server.addTransactions([("2000000000000401", "2000000000000401", "jws")], environment: .sandbox)
    let otherKey = server.settings(keyPEM: P256.Signing.PrivateKey().pemRepresentation)
    var otherBundle = server.settings(keyPEM: try Fixture.keyPEM())
    otherBundle.bundleId = "com.example.other"
    var otherKeyId = server.settings(keyPEM: try Fixture.keyPEM())
    otherKeyId.keyId = "OTHERKEYID"
    for settings in [otherKey, otherBundle, otherKeyId] {
      let client = try AppStoreServerClient(settings: settings)
      defer { client.shutdown() }
      let result = await client.transactionHistory(transactionId: "2000000000000401", revision: nil, environment: .sandbox)
      #expect(result == .failure(.unauthorized))
    }
    let requests = server.requests
    #expect(requests.count == 3)
    #expect(
      requests.map(\.tokenProblem) == [
        "the signature does not verify with the key", "bid is not the app's bundle id", "kid is not the key's id",
      ])
    #expect(requests.map(\.status) == [401, 401, 401])
  }

  @Test("a 401 fault is .unauthorized; a 200 that is not JSON is .invalidResponse; 400 for a malformed id, percent-encoded")
  func otherFailures() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    server.addTransactions([("2000000000000501", "2000000000000501", "jws")], environment: .sandbox)
    let client = try AppStoreServerClient(settings: server.settings(keyPEM: try Fixture.keyPEM()))
    defer { client.shutdown() }

    server.inject(.unauthorized)
    let refused = await client.transactionHistory(transactionId: "2000000000000501", revision: nil, environment: .sandbox)
    #expect(refused == .failure(.unauthorized))
    server.inject(.notJSON)
    let html = await client.transactionHistory(transactionId: "2000000000000501", revision: nil, environment: .sandbox)
    #expect(
      html
        == .failure(
          .invalidResponse(
            message: """
              the App Store Server API answered GET /inApps/v2/history/2000000000000501 (Sandbox) with 200 but a body \
              that is not a JSON object, not the documented JSON
              """)))
    let malformed = await client.transactionHistory(transactionId: "12/3 4?", revision: "a b&c", environment: .sandbox)
    #expect(
      malformed
        == .failure(
          .invalidRequest(
            errorCode: 4_000_006,
            message: """
              the App Store Server API refused GET /inApps/v2/history/12%2F3%204%3F (Sandbox) with 400: \
              "Invalid transaction id." (errorCode 4000006)
              """)))
    let requests = server.requests
    #expect(requests.count == 3)
    #expect(requests[2].path == "/inApps/v2/history/12%2F3%204%3F")
    #expect(requests[2].query == "sort=ASCENDING&revision=a%20b%26c")
    #expect(requests.map(\.status) == [401, 200, 400])
  }

  @Test("429 with Retry-After: 1 twice, then 200: the page, after three requests and two waits of a second")
  func rateLimitedThenAnswered() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    server.addTransactions([("2000000000000601", "2000000000000601", "jws-601")], environment: .sandbox)
    let client = try AppStoreServerClient(
      settings: server.settings(keyPEM: try Fixture.keyPEM(), maxRetries: 3, maxRetryDelaySeconds: 5))
    defer { client.shutdown() }
    server.inject(.rateLimited(retryAfter: 1), times: 2)

    let clock = ContinuousClock()
    let started = clock.now
    let result = await client.transactionHistory(transactionId: "2000000000000601", revision: nil, environment: .sandbox)
    let elapsed = clock.now - started
    let page = try result.get()
    #expect(page.signedTransactions == ["jws-601"])
    #expect(page.hasMore == false)
    #expect(server.requests.map(\.status) == [429, 429, 200])
    #expect(server.requests.allSatisfy { $0.tokenValid })
    #expect(elapsed >= .seconds(2))
  }

  @Test("500 beyond maxRetries: .unavailable(status: 500) after exactly maxRetries + 1 requests; a 503 once is retried")
  func serverErrors() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    server.addTransactions([("2000000000000701", "2000000000000701", "jws-701")], environment: .production)
    let client = try AppStoreServerClient(
      settings: server.settings(keyPEM: try Fixture.keyPEM(), maxRetries: 2, maxRetryDelaySeconds: 0.05))
    defer { client.shutdown() }
    server.inject(.internalServerError, times: 10)

    let result = await client.transactionHistory(transactionId: "2000000000000701", revision: nil, environment: .production)
    #expect(
      result
        == .failure(
          .unavailable(
            status: 500,
            message: """
              the App Store Server API answered GET /inApps/v2/history/2000000000000701 (Production) with 500: \
              "An unknown error occurred." (errorCode 5000000), after 3 attempts
              """)))
    #expect(server.requests.map(\.status) == [500, 500, 500])

    let fresh = try Fixture.server()
    defer { fresh.shutdown() }
    fresh.addTransactions([("2000000000000701", "2000000000000701", "jws-701")], environment: .production)
    let second = try AppStoreServerClient(
      settings: fresh.settings(keyPEM: try Fixture.keyPEM(), maxRetries: 2, maxRetryDelaySeconds: 0.05))
    defer { second.shutdown() }
    fresh.inject(.serviceUnavailable)
    let retried = await second.transactionHistory(transactionId: "2000000000000701", revision: nil, environment: .production)
    #expect(retried.map(\.signedTransactions) == .success(["jws-701"]))
    #expect(fresh.requests.map(\.status) == [503, 200])
  }

  @Test("a server that never answers: .transport within the request timeout, not retried")
  func hang() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    let client = try AppStoreServerClient(
      settings: server.settings(keyPEM: try Fixture.keyPEM(), requestTimeoutSeconds: 0.5, maxRetries: 3))
    defer { client.shutdown() }
    server.inject(.hang)

    let clock = ContinuousClock()
    let started = clock.now
    let result = await client.notificationHistory(
      startDate: 0, endDate: 1, onlyFailures: false, paginationToken: nil, environment: .sandbox)
    let elapsed = clock.now - started
    #expect(
      result
        == .failure(
          .transport(message: "localhost did not answer POST /inApps/v1/notifications/history (Sandbox) within 0.5 s")))
    #expect(elapsed >= .milliseconds(450))
    #expect(server.requests.count == 1)
    #expect(server.requests.first?.status == 0)
  }

  @Test("the bearer token: header and payload exactly as Apple asks, ES256 over r||s, reused until a minute before exp")
  func bearerToken() async throws {
    let clock = Fixture.Clock(1_700_000_000)
    let server = try Fixture.server(now: { clock.now })
    defer { server.shutdown() }
    server.addTransactions([("2000000000000801", "2000000000000801", "jws")], environment: .sandbox)
    let client = try AppStoreServerClient(
      settings: server.settings(keyPEM: try Fixture.keyPEM()), logger: Logger(label: "test"), now: { clock.now })
    defer { client.shutdown() }

    _ = try await client.transactionHistory(transactionId: "2000000000000801", revision: nil, environment: .sandbox).get()
    clock.advance(239)
    _ = try await client.transactionHistory(transactionId: "2000000000000801", revision: nil, environment: .sandbox).get()
    clock.advance(1)
    _ = try await client.transactionHistory(transactionId: "2000000000000801", revision: nil, environment: .sandbox).get()

    let tokens = server.requests.map(\.bearerToken)
    #expect(tokens.count == 3)
    #expect(tokens[0] == tokens[1])
    #expect(tokens[1] != tokens[2])
    for (token, issuedAt) in zip(tokens, [Int64(1_700_000_000), 1_700_000_000, 1_700_000_240]) {
      let text = try #require(token)
      let decoded = try #require(AppStoreTestBearerToken.decode(text))
      #expect(
        decoded.header
          == JSONObject([("alg", .string("ES256")), ("kid", .string(Fixture.keyId)), ("typ", .string("JWT"))]))
      #expect(
        decoded.payload
          == JSONObject([
            ("iss", .string(Fixture.issuerId)), ("iat", .number(String(issuedAt))), ("exp", .number(String(issuedAt + 300))),
            ("aud", .string("appstoreconnect-v1")), ("bid", .string(Fixture.bundleId)),
          ]))
      #expect(decoded.signature.count == 64)
      let signingInput = String(text.prefix(upTo: text.lastIndex(of: ".")!))
      let signature = try P256.Signing.ECDSASignature(rawRepresentation: decoded.signature)
      #expect(try Fixture.key().publicKey.isValidSignature(signature, for: Array(signingInput.utf8)))
      #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
    }
    #expect(server.requests.allSatisfy { $0.tokenValid })
  }

  @Test("shut down from an async context without blocking forever; a later call is a transport failure")
  func shutdown() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    let client = try AppStoreServerClient(settings: server.settings(keyPEM: try Fixture.keyPEM()))
    client.shutdown()
    client.shutdown()
    let result = await client.transactionHistory(transactionId: "1", revision: nil, environment: .sandbox)
    #expect(
      result
        == .failure(
          .transport(message: "the App Store Server API client is shut down; GET /inApps/v2/history/1 (Sandbox) was not sent")))
    #expect(server.requests.isEmpty)
  }
}
