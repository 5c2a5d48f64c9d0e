from envbench.cli import main

main()
