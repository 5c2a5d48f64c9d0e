"""Offline worlds to rename against without a Wikidata dump: the sample world (``sample/``),
``kb-from-corpus`` with its typing signals and gazetteers, the relation type table, dump writing."""
