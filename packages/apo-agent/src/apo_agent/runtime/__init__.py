"""What a run needs around its maths: checkpoints that resume exactly (`checkpoints`),
metrics to CSV and plots (`metrics`), the one seeding block and every derived seed
(`seeding`), and the lock that keeps two processes out of one folder (`lock`)."""
