B=/work/main/contrib/bench/bench-fio.sh
J=rw-qd1,rw-qd16,rw-hot-qd1,rw-hot-qd16,seq-write
for round in 1 2 3; do
 for v in bm b32; do
  $B --raidfuse /tmp/$v/raidfuse --configs raid5-4:on --jobs $J --rand-io-size 256M --runtime 30 --wait-idle 3 --dir /var/tmp/rx/w --out /var/tmp/rx/r3/$v-$round > /dev/null 2>&1
 done
 $B --raidfuse /tmp/bm/raidfuse --configs raid5-4:off --jobs rw-qd1,rw-qd16,rw-hot-qd1,rw-hot-qd16 --rand-io-size 256M --runtime 30 --wait-idle 3 --dir /var/tmp/rx/w --out /var/tmp/rx/r3/off-$round > /dev/null 2>&1
done
echo done
