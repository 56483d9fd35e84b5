B=/work/main/contrib/bench/bench-fio.sh
for round in 1 2; do
 for v in b32 b64; do
  $B --raidfuse /tmp/$v/raidfuse --configs raid5-4:on --jobs rw-qd1,rw-qd16,rw-hot-qd16 --rand-io-size 256M --runtime 30 --wait-idle 3 --dir /var/tmp/rx/w --out /var/tmp/rx/r4/$v-$round > /dev/null 2>&1
 done
done
echo done
