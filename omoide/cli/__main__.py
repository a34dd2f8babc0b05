from omoide.cli import main

main()
