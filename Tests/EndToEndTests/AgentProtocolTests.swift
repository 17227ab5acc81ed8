import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// MCP and OpenRPC through the built binary, beyond the golden transcripts (Golden/mcp, Golden/discovery).
@Suite("Agent protocols end to end")
struct AgentProtocolTests {
  static let golden = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Golden")

  @Test("the MCP transcript is answered as recorded with one thread and with two", arguments: ["1", "2"])
  func mcpTranscriptAnyThreads(threads: String) throws {
    let (result, output) = try GoldenTranscriptTests.transcript(
      requests: Self.golden.appendingPathComponent("mcp/requests.jsonl"),
      config: Self.golden.appendingPathComponent("config.yaml").path, backend: .sqlite,
      extraArguments: ["--threads", threads])
    #expect(result.status == 0)
    #expect(output == (try Data(contentsOf: Self.golden.appendingPathComponent("mcp/responses.jsonl"))))
  }

  /// The transcript is shorter than the 64 lines at which a read is split between two threads; three
  /// copies in one read are not, so the helper thread answers store-free tool calls of the later half
  /// while store tool calls (authorize, process, get, list products) keep their places.
  @Test("three MCP transcripts in one read are answered the same by one thread and by two")
  func mcpTranscriptSplitBetweenThreads() throws {
    let once = try Data(contentsOf: Self.golden.appendingPathComponent("mcp/requests.jsonl"))
    let input = once + once + once
    #expect(input.split(separator: UInt8(ascii: "\n")).count >= 64)
    let config = Self.golden.appendingPathComponent("config.yaml").path
    func run(_ threads: String) throws -> Data {
      let store = TestPaths.temporaryDirectory()
      defer { try? FileManager.default.removeItem(at: store) }
      let result = try PayserviceProcess.run(
        ["--config", config, "--database", store.appendingPathComponent("s.sqlite").path, "--now",
         "2026-11-21T12:00:00Z", "--quiet", "--threads", threads], stdin: input)
      #expect(result.status == 0)
      return result.stdout
    }
    let alone = try run("1")
    #expect(alone.split(separator: UInt8(ascii: "\n")).count == 3 * 34)
    #expect(try run("2") == alone)
  }

  @Test("every structuredContent in the MCP transcript fits its tool's outputSchema")
  func structuredContentFitsOutputSchema() throws {
    let requests = try String(contentsOf: Self.golden.appendingPathComponent("mcp/requests.jsonl"), encoding: .utf8)
    let responses = try String(contentsOf: Self.golden.appendingPathComponent("mcp/responses.jsonl"), encoding: .utf8)
    var tools: [String: String] = [:]
    for line in requests.split(separator: "\n") {
      if case .object(let request) = try JSONParser.parse(String(line)), request["method"] == .string("tools/call"),
        let id = request["id"], case .object(let params)? = request["params"], case .string(let name)? = params["name"]
      {
        tools[JSONWriter.string(id)] = name
      }
    }
    let methods = Dictionary(uniqueKeysWithValues: MethodRegistry.methods.map { ($0.name, $0) })
    var checked = 0
    for line in responses.split(separator: "\n") {
      guard case .object(let response) = try JSONParser.parse(String(line)), let id = response["id"],
        let tool = tools[JSONWriter.string(id)], case .object(let result)? = response["result"],
        let structured = result["structuredContent"], let method = methods[tool]
      else { continue }
      #expect(JSONSchemaValidator(schema: method.description.result.json).validate(structured) == [], "id \(JSONWriter.string(id))")
      checked += 1
    }
    // 12: the transcript's two getOrder calls are refused (getOrder is the back office's).
    #expect(checked == 12)
  }

  @Test("--version prints the package version")
  func version() throws {
    let result = try PayserviceProcess.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stdoutText == "\(PayServiceVersion.current)\n")
  }

  @Test("payservice call rpc.discover prints the OpenRPC document")
  func callDiscover() throws {
    let result = try PayserviceProcess.run(["call", "rpc.discover", "--config", TestConfig.yamlPath])
    #expect(result.status == 0)
    #expect(result.stdoutText == JSONWriter.string(OpenRPCDocument.json) + "\n")
  }
}
