import PayServiceCommands

PayServiceCommandLine.main(Array(CommandLine.arguments.dropFirst()))
